import type { FieldError } from '../validation/item-errors.ts';
import type { CatalogRows } from './catalog-state.repository.ts';
import { itemDiff, type DiffElement } from './catalog-diff.ts';
import { mergeItems, type ProductRow, type VariantRow } from './merge-items.ts';
import type { FullProductIngest } from './product-schema.ts';

/**
 * Items applied one at a time to a copy of the stored rows they name, with the worker's merge
 * (`mergeItems`), so each item sees the earlier ones' effect and its diff is the difference between
 * two sets of merged rows. The preview (docs/reference.md §11.2) shows these diffs; the worker records them as the
 * product's history (docs/reference.md §11.3) in the transaction that writes the same merge's rows.
 */

/** What applying one valid item did: its action, its diff, and its rows after the merge. */
export type AppliedItem =
  | {
      ok: true;
      action: 'create' | 'update' | 'unchanged';
      /** `[]` for `create` (all of it is new) and `unchanged`. */
      diff: DiffElement[];
      product: ProductRow;
      /** The item's variants after the merge, in the item's order. */
      variants: VariantRow[];
    }
  | { ok: false; errors: FieldError[] };

/**
 * Merges one valid item into `catalog` (which it updates: the next item sees this one applied) as
 * processing would, and says what it changed. An item that uses a sku another product owns is
 * rejected whole (`sku_conflict`) and changes nothing.
 */
export function applyItem(catalog: CatalogRows, index: number, item: FullProductIngest): AppliedItem {
  // The merge needs only the item's own skus: their owners (a sku_conflict) and their images.
  const named = new Map<string, VariantRow>();
  for (const { sku } of item.variants) {
    const row = catalog.variants.get(sku);
    if (row) named.set(sku, row);
  }
  const merged = mergeItems([{ index, item }], named);
  const rejected = merged.rejected[0];
  if (rejected) return { ok: false, errors: rejected.errors };
  const product = merged.products[0];
  if (!product) throw new Error('the merge applied an item without its product');
  const after = new Map(merged.variants.map((row) => [row.sku, row]));
  const variants = item.variants.map(({ sku }) => after.get(sku) as VariantRow);
  const stored = catalog.products.get(item.external_id);
  catalog.products.set(item.external_id, product);
  for (const row of merged.variants) catalog.variants.set(row.sku, row);
  if (!stored) return { ok: true, action: 'create', diff: [], product, variants };
  const diff = itemDiff(item, { product: stored, variants: named }, { product, variants: after });
  return { ok: true, action: diff.length > 0 ? 'update' : 'unchanged', diff, product, variants };
}
