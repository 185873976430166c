import type { MergedImage, ProductRow, VariantRow } from './merge-items.ts';
import { FullProductIngest, ProductVariantIngest, type FullProductIngest as Item } from './product-schema.ts';

/**
 * What an applied item changes in the catalog, one element per changed path in the syntax of error
 * fields, with the request item's indices (docs/reference.md §10.3, §11.2). It compares rows, not requests:
 * `after` is what the merge of processing (`mergeItems`) makes of the item, `before` what the
 * catalog held, so every rule of the merge (images by url, an absent angle kept, unsent variants
 * kept) is the merge's own. The preview and the product history both read their diffs from here.
 */

/** A stored image as the catalog reads show it (docs/reference.md §9): `angle: null` when none is stored. */
export interface ImageValue {
  url: string;
  angle: number | null;
}

/** A stored variant as the catalog reads show it (docs/reference.md §9), without timestamps. */
export type VariantValue = Omit<VariantRow, 'external_id' | 'images'> & { images: ImageValue[] };

/** A product as the catalog reads show it (docs/reference.md §9), without timestamps. */
export type ProductValue = ProductRow & { variants: VariantValue[] };

/**
 * One changed path (docs/reference.md §11.2): `add` a new variant or image (the whole of it in `to`), `change` a
 * stored value (`from` → `to`), `remove` a variant deleted through the API (docs/reference.md §11.3). Elements about a
 * variant carry its `sku`; about an image, also its `url`.
 */
export type DiffElement =
  | { path: string; op: 'change'; sku?: string; url?: string; from: unknown; to: unknown }
  | { path: string; op: 'add'; sku?: string; url?: string; to: unknown }
  | { path: string; op: 'remove'; sku: string; from: VariantValue };

/** The product's own columns, from the one item schema: every one but the key and the variants. */
const PRODUCT_FIELDS = Object.keys(FullProductIngest.properties).filter(
  (field): field is Exclude<keyof ProductRow, 'external_id'> =>
    field !== 'external_id' && field !== 'variants',
);
/** A variant's own columns: every one but the key and the images. */
const VARIANT_FIELDS = Object.keys(ProductVariantIngest.properties).filter(
  (field): field is Exclude<keyof VariantRow, 'sku' | 'external_id' | 'images'> =>
    field !== 'sku' && field !== 'images',
);

/** A stored image without an angle reads as null (docs/reference.md §5): absent and null are the same stored value. */
const angleOf = (image: MergedImage | undefined) => image?.angle ?? null;

/** An image as the reads show it. */
export const imageValue = (image: MergedImage): ImageValue => ({ url: image.url, angle: angleOf(image) });

/** A variant row as the reads show it: its fields in the schema's order, then its images. */
export function variantValue(row: VariantRow): VariantValue {
  const value = { sku: row.sku } as Record<string, unknown>;
  for (const field of VARIANT_FIELDS) value[field] = row[field];
  value.images = row.images.map(imageValue);
  return value as VariantValue;
}

/** A product and its variants (in the order given) as the reads show them. */
export function productValue(product: ProductRow, variants: readonly VariantRow[]): ProductValue {
  const value = { external_id: product.external_id } as Record<string, unknown>;
  for (const field of PRODUCT_FIELDS) value[field] = product[field];
  value.variants = variants.map(variantValue);
  return value as ProductValue;
}

/**
 * What applying `item` changes: `before` is the catalog (stored, and the body's earlier items
 * applied) as the item found it, `after` the merge's rows for the item; one element per changed
 * path, products' fields first, then each variant of the item in its order.
 * Numbers compare with `===`: the catalog keeps a number as the JSON text of the parsed value
 * (float8 from `JSON.stringify`), so equal doubles are the same stored value (and -0 is stored as 0).
 */
export function itemDiff(
  item: Item,
  before: { product: ProductRow; variants: ReadonlyMap<string, VariantRow> },
  after: { product: ProductRow; variants: ReadonlyMap<string, VariantRow> },
): DiffElement[] {
  const diff: DiffElement[] = [];
  for (const field of PRODUCT_FIELDS) {
    const from = before.product[field];
    const to = after.product[field];
    if (from !== to) diff.push({ path: field, op: 'change', from, to });
  }
  item.variants.forEach(({ sku, images }, v) => {
    const old = before.variants.get(sku);
    const now = after.variants.get(sku);
    if (!now) throw new Error(`the merge left out the variant ${v} of an item it applied`);
    if (!old) {
      diff.push({ path: `variants[${v}]`, op: 'add', sku, to: variantValue(now) });
      return;
    }
    for (const field of VARIANT_FIELDS) {
      if (old[field] !== now[field]) {
        diff.push({ path: `variants[${v}].${field}`, op: 'change', sku, from: old[field], to: now[field] });
      }
    }
    images?.forEach(({ url }, i) => {
      const stored = old.images.find((image) => image.url === url);
      const merged = now.images.find((image) => image.url === url);
      if (!merged) throw new Error(`the merge left out the image ${i} of variant ${v}`);
      if (!stored)
        diff.push({ path: `variants[${v}].images[${i}]`, op: 'add', sku, url, to: imageValue(merged) });
      else if (angleOf(stored) !== angleOf(merged)) {
        const path = `variants[${v}].images[${i}].angle`;
        diff.push({ path, op: 'change', sku, url, from: angleOf(stored), to: angleOf(merged) });
      }
    });
  });
  return diff;
}
