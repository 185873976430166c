import { skuConflict, type FieldError } from '../validation/item-errors.ts';
import type { FullProductIngest, ProductImageIngest, ProductVariantIngest } from './product-schema.ts';

/**
 * An image of a variant as the merge keeps it: stored, or as a run of items patches it. Stored, an
 * absent `angle` reads as null (none was ever sent); in a patch it keeps the stored angle. (The API
 * shows stored images with `angle` always present: `ProductView`.)
 */
export interface MergedImage {
  url: string;
  angle?: number | null;
}

/** What the catalog already holds for a sku: the product that owns it, and its images. */
export interface OwnedVariant {
  sku: string;
  external_id: string;
  images: MergedImage[];
}

/** A product's own columns: the item without its variants. */
export type ProductRow = Omit<FullProductIngest, 'variants'>;

/** A variant's row as written: its fields as ingested, its merged images and the product it belongs to. */
export type VariantRow = Omit<ProductVariantIngest, 'images'> & {
  external_id: string;
  images: MergedImage[];
};

/** The rows to write for a run of items, and the items that cannot be written. */
export interface MergedChunk {
  products: ProductRow[];
  variants: VariantRow[];
  /** Indices (batch positions) of the items the rows contain. */
  applied: number[];
  rejected: Array<{ index: number; errors: FieldError[] }>;
}

/**
 * Merges `incoming` into `stored` by url: known urls are updated in place (an absent `angle` keeps
 * the stored one, `null` clears it), new urls are appended in the order they first appear, and
 * stored urls that were not sent stay. An image whose angle was never sent keeps no `angle`, so
 * that folding patches together and then into the stored images (`merge_images` in SQL, migration
 * 005) gives what applying them one after another gives. `merge_images` is this rule's twin, which
 * the variants upsert runs; test/property/merge-images.test.ts holds the two equal.
 */
export function mergeImages(
  stored: readonly MergedImage[],
  incoming: readonly ProductImageIngest[],
): MergedImage[] {
  // Copies, as a literal (a spread is V8's slow generic copy): the stored images stay as they were.
  const merged = stored.map((image): MergedImage =>
    image.angle === undefined ? { url: image.url } : { url: image.url, angle: image.angle },
  );
  const byUrl = new Map(merged.map((image) => [image.url, image]));
  for (const image of incoming) {
    const known = byUrl.get(image.url);
    if (known) {
      if (image.angle !== undefined) known.angle = image.angle;
    } else {
      const added: MergedImage =
        image.angle === undefined ? { url: image.url } : { url: image.url, angle: image.angle };
      merged.push(added);
      byUrl.set(added.url, added);
    }
  }
  return merged;
}

// The rows are built field by field rather than with object rest (`{ variants, ...product }`), which
// V8 runs through a generic runtime copy: this is the hot path of both processing and the preview, and
// with literals merging and diffing a preview's 1000 items went from 14 to 4.5 ms (docs/performance.md,
// preview). Every field but `images` is required by the item schema, so the type checker holds each
// literal to the schema.
const productRow = (item: FullProductIngest): ProductRow => ({
  external_id: item.external_id,
  name: item.name,
  description: item.description,
  style: item.style,
  type: item.type,
  sub_type: item.sub_type,
});

const variantRow = (
  variant: ProductVariantIngest,
  externalId: string,
  images: MergedImage[],
): VariantRow => ({
  sku: variant.sku,
  name: variant.name,
  item_url: variant.item_url,
  depth: variant.depth,
  height: variant.height,
  width: variant.width,
  weight: variant.weight,
  color: variant.color,
  price: variant.price,
  brand: variant.brand,
  external_id: externalId,
  images,
});

/**
 * Applies valid items, in index order, on top of `stored`, and returns the rows to write: one per
 * product and per variant, however often an item repeats them, so each table takes a single
 * set-based upsert. A later item with the same `external_id` patches the earlier one exactly as a
 * later batch would. An item that uses a sku owned by another product (in `stored`, or given to
 * another product earlier in the run) is rejected whole with `sku_conflict`, and changes nothing; the
 * message names the owner's external_id (the tenant's own data).
 *
 * The worker passes nothing stored at first: a variant's images are then the run's patches folded
 * together (`[]` when none were sent), which the upsert folds into the stored images, and the upsert
 * itself refuses a sku that another product owns. Only when it does (or when a failed write is
 * narrowed down item by item) are the stored variants read and the items merged on top of them.
 */
export function mergeItems(
  items: ReadonlyArray<{ index: number; item: FullProductIngest }>,
  stored: ReadonlyMap<string, OwnedVariant> = new Map(),
): MergedChunk {
  const products = new Map<string, ProductRow>();
  const variants = new Map<string, VariantRow>();
  const owner = new Map<string, string>();
  for (const [sku, variant] of stored) owner.set(sku, variant.external_id);
  const applied: number[] = [];
  const rejected: MergedChunk['rejected'] = [];

  for (const { index, item } of items) {
    const conflicts: FieldError[] = [];
    item.variants.forEach((variant, v) => {
      const current = owner.get(variant.sku);
      if (current !== undefined && current !== item.external_id) {
        conflicts.push(skuConflict(v, variant.sku, current));
      }
    });
    if (conflicts.length > 0) {
      rejected.push({ index, errors: conflicts });
      continue;
    }
    products.set(item.external_id, productRow(item));
    for (const variant of item.variants) {
      owner.set(variant.sku, item.external_id);
      const previousImages = variants.get(variant.sku)?.images ?? stored.get(variant.sku)?.images ?? [];
      const images =
        variant.images === undefined ? previousImages : mergeImages(previousImages, variant.images);
      variants.set(variant.sku, variantRow(variant, item.external_id, images));
    }
    applied.push(index);
  }
  return { products: [...products.values()], variants: [...variants.values()], applied, rejected };
}
