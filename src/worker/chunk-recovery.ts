import type { Database } from '../db/database.ts';
import {
  advanceBatch,
  insertItemFailures,
  type BatchKey,
} from '../ingestion/batches/batch-progress.repository.ts';
import type { BatchItems } from './batch-items.ts';
import { mergeChunkWithCatalog } from './chunk-merge.ts';
import { writeChunk, type ChunkStep } from './chunk-writer.ts';
import { internalError } from '../validation/item-errors.ts';

/** The two rare ends of a chunk's write: a sku another product owns, and a write the data makes fail. */

/**
 * Writes [from, to) again after its first write came back `'sku-taken'` or `'data-error'`. A taken
 * sku: the items are merged on top of the stored variants, which rejects the items at fault, and
 * written again. A data error: the items are written one by one. Null when another run wrote the
 * chunk or the batch has ended.
 */
export async function recoverChunk(
  db: Database,
  batch: BatchKey,
  items: BatchItems,
  range: { from: number; to: number },
  cause: 'sku-taken' | 'data-error',
  onWriting?: () => void,
): Promise<ChunkStep | null> {
  const { from, to } = range;
  if (cause === 'data-error') return writeItemByItem(db, batch, items, from, to, onWriting);
  const chunkItems = await items.validIn(from, to);
  if (!chunkItems) return null; // ended by another run
  const again = await writeChunk(
    db,
    batch,
    (tx) => mergeChunkWithCatalog(tx, batch.tenantId, from, to, chunkItems),
    { onWriting },
  );
  // The look-up and the write share a transaction: only a second writer of the tenant's catalog
  // (a run that lost its lock) could take a sku in between.
  if (again === 'sku-taken') throw new Error('A sku of the chunk was taken while it was being merged');
  return again === 'data-error' ? writeItemByItem(db, batch, items, from, to, onWriting) : again;
}

/**
 * Writes the items of [from, to) one at a time, each merged against the catalog, so one bad item
 * cannot sink the others; an item that still cannot be written is recorded as `internal_error`.
 */
async function writeItemByItem(
  db: Database,
  batch: BatchKey,
  items: BatchItems,
  from: number,
  to: number,
  onWriting?: () => void,
): Promise<ChunkStep | null> {
  const totals = { upserted: 0, failed: 0 };
  for (let index = from; index < to; index++) {
    const single = await items.validIn(index, index + 1);
    if (!single) return null; // ended by another run
    const written = await writeChunk(
      db,
      batch,
      (tx) => mergeChunkWithCatalog(tx, batch.tenantId, index, index + 1, single),
      { onWriting },
    );
    // A sku taken under a merge just made against the catalog is a second writer's doing, not the item's.
    if (written === 'sku-taken') throw new Error('A sku of the item was taken while it was being merged');
    const step = written === 'data-error' ? await failItem(db, batch, index, single[0]?.item) : written;
    if (!step) return null;
    totals.upserted += step.upserted;
    totals.failed += step.failed;
  }
  return totals;
}

/** Settles one item as `internal_error`; null when another run had settled it. */
function failItem(db: Database, batch: BatchKey, index: number, item: unknown): Promise<ChunkStep | null> {
  return db.transaction(async (tx) => {
    const step = { upserted: 0, failed: 1 };
    const fence = await advanceBatch(tx, { ...batch, fromIndex: index, toIndex: index + 1, ...step });
    if (!fence) return null;
    await insertItemFailures(tx, batch, [internalError(index, item)]);
    return step;
  });
}
