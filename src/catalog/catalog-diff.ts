import type { MergedImage, ProductRow, VariantRow } from './merge-items.ts';
import { FullProductIngest, ProductVariantIngest, type FullProductIngest as Item } from './product-schema.ts';

/**
 * What an applied item changes in the catalog, as paths in the syntax of error fields, with the
 * request item's indices (CONTRACT §10.3). It compares rows, not requests: `after` is what the merge
 * of processing (`mergeItems`) makes of the item, `before` what the catalog held, so every rule of
 * the merge (images by url, an absent angle kept, unsent variants kept) is the merge's own.
 */

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

/** A stored image without an angle reads as null (§5): absent and null are the same stored value. */
const angleOf = (image: MergedImage | undefined) => image?.angle ?? null;

/**
 * The paths whose stored value applying `item` changes: `before` is the catalog (stored, and the
 * body's earlier items applied) as the item found it, `after` the merge's rows for the item.
 * Numbers compare with `===`: the catalog keeps a number as the JSON text of the parsed value
 * (float8 from `JSON.stringify`), so equal doubles are the same stored value (and -0 is stored as 0).
 */
export function changedPaths(
  item: Item,
  before: { product: ProductRow; variants: ReadonlyMap<string, VariantRow> },
  after: { product: ProductRow; variants: ReadonlyMap<string, VariantRow> },
): string[] {
  const changes: string[] = PRODUCT_FIELDS.filter((field) => before.product[field] !== after.product[field]);
  item.variants.forEach(({ sku, images }, v) => {
    const old = before.variants.get(sku);
    const now = after.variants.get(sku);
    if (!now) throw new Error(`the merge left out the variant ${v} of an item it applied`);
    if (!old) {
      changes.push(`variants[${v}]`);
      return;
    }
    for (const field of VARIANT_FIELDS) {
      if (old[field] !== now[field]) changes.push(`variants[${v}].${field}`);
    }
    images?.forEach(({ url }, i) => {
      const stored = old.images.find((image) => image.url === url);
      if (!stored) changes.push(`variants[${v}].images[${i}]`);
      else if (angleOf(stored) !== angleOf(now.images.find((image) => image.url === url)))
        changes.push(`variants[${v}].images[${i}].angle`);
    });
  });
  return changes;
}
