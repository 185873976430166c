import type { Database } from '../db/database.ts';
import type { FullProductIngest } from '../catalog/product-schema.ts';
import {
  findVariantsBySku,
  serializeRows,
  upsertProducts,
  upsertVariants,
  type SerializedRows,
} from '../catalog/catalog.repository.ts';
import { mergeItems, type MergedChunk } from '../catalog/merge-items.ts';
import type { BatchRow } from './batch.repository.ts';
import { advanceBatch, insertItemFailures, type ItemFailure } from './batch-progress.repository.ts';
import { internalError, isDataError, itemKeys } from './item-failures.ts';

/**
 * Thrown inside a chunk's transaction, to roll it back, when the variants upsert left a sku alone
 * because another product owns it: the chunk is then merged against the stored variants, which
 * tells the items to reject.
 */
class SkuOwnedElsewhereError extends Error {
  constructor() {
    super('a sku of the chunk belongs to another product');
  }
}

/** Items of a chunk with their index in the batch. */
export type ChunkItems = Array<{ index: number; item: FullProductIngest }>;
/** A batch's valid items by index. */
export type ValidItems = Map<number, FullProductIngest>;

/** Every item of a batch judged: the valid ones by index, and the records of the others. */
export interface Verdicts {
  valid: ValidItems;
  failures: ItemFailure[];
}

/**
 * The items of [from, to) merged and ready to write: the rows serialized, and what the run records
 * about them. It holds no parsed item or merged row. A batch's parsed items are several megabytes of
 * small objects; kept until the rows were written (through this batch's statements and the
 * preparation of the next), they outlived the young generation and were copied into the old one
 * (docs/performance.md, "An eleventh look").
 */
export interface WritableChunk {
  from: number;
  to: number;
  products: SerializedRows;
  variants: SerializedRows;
  upserted: number;
  /** The items rejected by the merge (`sku_conflict`), with their keys. */
  failures: ItemFailure[];
}

/** What a chunk's write did to the batch's counters; null when another run had written it. */
export type ChunkStep = { upserted: number; failed: number } | null;

/** How a chunk's write takes part in the worker's pipeline. */
export interface WriteOptions {
  /** Called when the chunk's rows are on their way to the database (see PipelineOptions). */
  onWriting?: () => void;
}

/** The valid items in [from, to), in index order. */
export function validItemsIn(known: ValidItems, from: number, to: number): ChunkItems {
  const items: ChunkItems = [];
  for (let i = from; i < to; i++) {
    const item = known.get(i);
    if (item) items.push({ index: i, item });
  }
  return items;
}

/** The rows of a merge, serialized, and the records of the items it rejected. */
function toWritable(from: number, to: number, items: ChunkItems, merged: MergedChunk): WritableChunk {
  const byIndex = merged.rejected.length > 0 ? new Map(items.map(({ index, item }) => [index, item])) : null;
  return {
    from,
    to,
    products: serializeRows(merged.products),
    variants: serializeRows(merged.variants),
    upserted: merged.applied.length,
    failures: merged.rejected.map(({ index, errors }) => ({
      index,
      ...itemKeys(byIndex?.get(index), errors),
      errors,
    })),
  };
}

/** Merges the items of [from, to) with each other, reading nothing: the upsert does the rest. */
export const mergeChunk = (from: number, to: number, items: ChunkItems) =>
  toWritable(from, to, items, mergeItems(items));

/**
 * Writes merged chunks, each in one transaction fenced by the batch's progress. The common path is
 * one upsert per table; the rare ones live here too: a sku another product owns (the chunk is merged
 * again against the stored variants) and a write the data makes fail (narrowed down item by item).
 */
export function createChunkWriter(deps: {
  db: Database;
  /** Reads a batch's items again and judges them; null when its body is gone. */
  readVerdicts: (key: { tenantId: string; batchId: string }) => Promise<Verdicts | null>;
}) {
  const { db, readVerdicts } = deps;

  /** Merges the items of [from, to) on top of the stored variants they name (the rare path). */
  async function mergeChunkWithCatalog(tenantId: string, from: number, to: number, items: ChunkItems) {
    const skus = [...new Set(items.flatMap(({ item }) => item.variants.map((v) => v.sku)))];
    return toWritable(from, to, items, mergeItems(items, await findVariantsBySku(db, tenantId, skus)));
  }

  /**
   * Writes a chunk in one transaction; null when another run already did. Throws
   * {@link SkuOwnedElsewhereError}, having written nothing, when a sku belongs to another product.
   */
  async function applyChunk(
    batch: BatchRow,
    chunk: WritableChunk,
    options: WriteOptions,
  ): Promise<ChunkStep> {
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    return db.transaction(async (tx) => {
      const step = { upserted: chunk.upserted, failed: chunk.failures.length };
      const fence = await advanceBatch(tx, { ...key, fromIndex: chunk.from, toIndex: chunk.to, ...step });
      if (!fence) return null;
      await upsertProducts(tx, key.tenantId, chunk.products);
      const writing = upsertVariants(tx, key.tenantId, chunk.variants);
      options.onWriting?.();
      if ((await writing) !== chunk.variants.count) throw new SkuOwnedElsewhereError();
      await insertItemFailures(tx, key, chunk.failures);
      return step;
    });
  }

  /**
   * Writes a chunk's rows; when the data makes the write fail, narrows the chunk down item by item.
   * `'sku-taken'` when a sku belongs to another product (nothing written).
   */
  async function tryChunk(batch: BatchRow, chunk: WritableChunk, options: WriteOptions) {
    try {
      return await applyChunk(batch, chunk, options);
    } catch (error) {
      if (error instanceof SkuOwnedElsewhereError) return 'sku-taken' as const;
      // A lost connection or a server restart is the job's to retry; only a write the data itself
      // makes fail is narrowed down.
      if (!isDataError(error)) throw error;
      return applyChunkItemByItem(batch, chunk.from, chunk.to, options);
    }
  }

  /**
   * A chunk whose write failed is retried item by item, so one bad item cannot sink the others;
   * an item that still cannot be written is recorded as `internal_error`. The items are read again:
   * this is the rare path, and the common one keeps none while it writes.
   */
  async function applyChunkItemByItem(
    batch: BatchRow,
    from: number,
    to: number,
    options: WriteOptions,
  ): Promise<ChunkStep> {
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    const verdicts = await readVerdicts(key);
    if (!verdicts) return null; // ended by another run
    const totals = { upserted: 0, failed: 0 };
    for (let i = from; i < to; i++) {
      const single = validItemsIn(verdicts.valid, i, i + 1);
      let step: ChunkStep;
      try {
        step = await applyChunk(batch, await mergeChunkWithCatalog(key.tenantId, i, i + 1, single), options);
      } catch (error) {
        // A sku taken under a merge just made against the catalog is a second writer's doing, not the item's.
        if (error instanceof SkuOwnedElsewhereError || !isDataError(error)) throw error;
        step = await db.transaction(async (tx) => {
          const fence = await advanceBatch(tx, {
            ...key,
            fromIndex: i,
            toIndex: i + 1,
            upserted: 0,
            failed: 1,
          });
          if (!fence) return null;
          await insertItemFailures(tx, key, [internalError(i, single[0]?.item)]);
          return { upserted: 0, failed: 1 };
        });
      }
      if (!step) return null;
      totals.upserted += step.upserted;
      totals.failed += step.failed;
    }
    return totals;
  }

  return {
    /**
     * Writes the rows of [from, to). When a sku turns out to belong to another product, the items are
     * read again (unless `held` has them) and merged against the stored variants, which rejects the
     * items at fault, and the chunk is written again. Reading is not writing: a failure to read is
     * never narrowed down.
     */
    async write(
      batch: BatchRow,
      chunk: WritableChunk,
      options: WriteOptions,
      /** The batch's items, when the run still holds them. */
      held: Verdicts | null,
    ): Promise<ChunkStep> {
      const written = await tryChunk(batch, chunk, options);
      if (written !== 'sku-taken') return written;
      const { from, to } = chunk;
      const verdicts = held ?? (await readVerdicts({ tenantId: batch.tenant_id, batchId: batch.batch_id }));
      if (!verdicts) return null; // ended by another run
      const merged = await mergeChunkWithCatalog(
        batch.tenant_id,
        from,
        to,
        validItemsIn(verdicts.valid, from, to),
      );
      const again = await tryChunk(batch, merged, options);
      // Only a second writer of the tenant's catalog could take a sku between the look-up and the write.
      if (again === 'sku-taken') throw new Error('A sku of the chunk was taken while it was being merged');
      return again;
    },
  };
}
