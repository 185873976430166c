import type { Queryable } from '../db/database.ts';
import {
  findVariantsBySku,
  lockProducts,
  serializeRows,
  variantKeys,
  type SerializedRows,
  type VariantKeys,
} from '../catalog/catalog.repository.ts';
import { mergeItems, type MergedChunk } from '../catalog/merge-items.ts';
import type { ItemFailure } from '../validation/item-errors.ts';
import type { ChunkItems } from './batch-items.ts';
import { itemKeys } from '../validation/item-errors.ts';

/**
 * The items of [from, to) merged and ready to write: the rows serialized, the items the merge
 * applied, and what the run records about them. It holds no merged row, and of the batch's parsed
 * items only its own (the batch's are let go once its last chunk is merged, `BatchItems.release`).
 */
export interface WritableChunk {
  from: number;
  to: number;
  products: SerializedRows;
  /** The products' external_ids, which the write locks and reads the stored rows of. */
  externalIds: string[];
  variants: SerializedRows;
  /** The variants' keys, which the products upsert reads for the search documents. */
  variantKeys: VariantKeys;
  upserted: number;
  /** The items rejected by the merge (`sku_conflict`), with their keys. */
  failures: ItemFailure[];
  /**
   * The items the merge applied: the chunk's history is made from them as it is written. Kept as
   * they are: serializing them here and parsing them there took 9 % of the worker's CPU time in the
   * bench (docs/performance.md, history). Nothing changes them: the merge copies what it keeps.
   */
  items: ChunkItems;
}

/** The items the merge applied: those it rejected change nothing, so they make no history. */
const applied = (items: ChunkItems, merged: MergedChunk): ChunkItems => {
  if (merged.rejected.length === 0) return items;
  const kept = new Set(merged.applied);
  return items.filter(({ index }) => kept.has(index));
};

/** The rows of a merge serialized, the items it applied, and the records of the items it rejected. */
function toWritable(from: number, to: number, items: ChunkItems, merged: MergedChunk): WritableChunk {
  const byIndex = merged.rejected.length > 0 ? new Map(items.map(({ index, item }) => [index, item])) : null;
  return {
    from,
    to,
    products: serializeRows(merged.products),
    externalIds: merged.products.map((product) => product.external_id),
    variants: serializeRows(merged.variants),
    variantKeys: variantKeys(merged.variants),
    upserted: merged.applied.length,
    items: applied(items, merged),
    failures: merged.rejected.map(({ index, errors }) => ({
      index,
      ...itemKeys(byIndex?.get(index), errors),
      errors,
    })),
  };
}

/** Merges the items of [from, to) with each other, reading nothing: the upsert does the rest. */
export const mergeChunk = (from: number, to: number, items: ChunkItems): WritableChunk =>
  toWritable(from, to, items, mergeItems(items));

/**
 * Merges the items of [from, to) on top of the stored variants they name (the rare path), inside
 * the transaction `tx` that then writes the rows: the items' products are locked first, so what is
 * read stays what is stored until the write commits (a delete of one of them waits, or went first
 * and the read no longer sees its variants).
 */
export async function mergeChunkWithCatalog(
  tx: Queryable,
  tenantId: string,
  from: number,
  to: number,
  items: ChunkItems,
): Promise<WritableChunk> {
  await lockProducts(tx, tenantId, [...new Set(items.map(({ item }) => item.external_id))]);
  const skus = [...new Set(items.flatMap(({ item }) => item.variants.map((v) => v.sku)))];
  return toWritable(from, to, items, mergeItems(items, await findVariantsBySku(tx, tenantId, skus)));
}
