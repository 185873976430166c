import type { Database, Queryable } from '../db/database.ts';
import { isConnectionFailure } from '../db/database-unavailable.ts';
import {
  lockProducts,
  touchProducts,
  upsertProducts,
  upsertVariants,
} from '../catalog/catalog.repository.ts';
import {
  insertSerializedHistory,
  serializeEntries,
  type SerializedEntries,
} from '../catalog/history.repository.ts';
import type { BatchStatus } from '../ingestion/batch-status.ts';
import {
  advanceBatch,
  finishBatch,
  insertItemFailures,
  lockUnfinishedBatch,
  type BatchKey,
  type OnBatchEnd,
} from '../ingestion/batches/batch-progress.repository.ts';
import type { WritableChunk } from './chunk-merge.ts';
import { historyEntries, readChunkBase } from './chunk-history.ts';

/**
 * Whether a failed write says something about the data (so retrying the item alone may isolate
 * it) rather than about the connection or the server (so the whole job should be retried later):
 * PostgreSQL's data-exception (22) and integrity (23) classes, errors without a SQLSTATE that are
 * not connection errors, and XX000 (internal error). An XX000 that one item's value trips would trip
 * again on every retry of the whole job; trying the items one by one is safe whatever its cause,
 * and isolates that item.
 */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return !isConnectionFailure(error);
  return code.startsWith('22') || code.startsWith('23') || code === 'XX000';
}

/** What a chunk's write added to the batch's counters. */
export interface ChunkStep {
  upserted: number;
  failed: number;
}

/** A chunk's step as its write committed it, with the batch's terminal status when it ended the batch. */
export interface WrittenChunk extends ChunkStep {
  ended: BatchStatus | null;
}

/**
 * How a chunk's write ended: its step; `null` when another run had written it; `'sku-taken'` when
 * a sku belongs to another product; `'data-error'` when the data made the write fail. Nothing is
 * written in the last two cases.
 */
export type ChunkWrite = WrittenChunk | null | 'sku-taken' | 'data-error';

/** What a chunk's transaction does besides writing the chunk. */
export interface ChunkWriteOptions {
  /**
   * Ends the batch after the chunk (`finishBatch`, with what else its end writes): given for its
   * last chunk on the common path, so that the batch's terminal status commits with its last rows
   * rather than in a transaction of its own (docs/architecture.md). The rare paths
   * (chunk-recovery.ts) leave the end to the run, after them.
   */
  onEnd?: OnBatchEnd;
  /** Called once the variants statement is on its way: the worker prepares the next batch then. */
  onWriting?: () => void;
}

/**
 * Rolls the chunk's transaction back when a sku of it belongs to another product: the history's
 * replay saw it, or the variants upsert left the sku alone.
 */
class SkuOwnedElsewhereError extends Error {
  constructor() {
    super('a sku of the chunk belongs to another product');
  }
}

/**
 * The stored products the chunk's entries say an item changed: those with an entry, but not one
 * the chunk creates (its insert already wrote the chunk's time). The entries decide, so a product's
 * `updated_at` moves exactly when its history records a change (docs/decisions.md). The bench's
 * baseline (bench/baseline.ts) touches the same products.
 */
export function changedStoredProducts(entries: SerializedEntries): string[] {
  const created = new Set(entries.externalIds.filter((_, i) => entries.actions[i] === 'create'));
  return [...new Set(entries.externalIds.filter((id) => !created.has(id)))];
}

/** A chunk's merge made inside its write's transaction, reading the catalog through `tx`. */
export type MergeInTransaction = (tx: Queryable) => Promise<WritableChunk>;

/**
 * Locks the chunk's stored products, reads the rows it will change (chunk-history.ts) and sends its
 * products upsert; from those rows it makes and serializes the chunk's history entries while the
 * server runs the upsert. Null when an item uses a sku another product owns. On a server the read
 * runs beside the upsert, on a connection of the database's reader pool: once the locks are held
 * nothing can change those rows, and that connection cannot see the upsert's uncommitted writes,
 * so it reads the rows as they were before the chunk whichever statement runs first. On the
 * embedded database the read runs in the transaction, before the upsert. A function of its own so
 * that the rows read and the entries' objects are not held while the chunk's other statements run.
 */
async function upsertProductsMakingHistory(
  tx: Queryable,
  db: Database,
  batch: BatchKey,
  chunk: WritableChunk,
): Promise<SerializedEntries | null> {
  // A chunk whose items were all invalid names no product: nothing to lock or read.
  if (chunk.externalIds.length > 0) await lockProducts(tx, batch.tenantId, chunk.externalIds);
  const keys = { externalIds: chunk.externalIds, skus: chunk.variantKeys.skus };
  const reading = readChunkBase(db.reader ?? tx, db.kind, batch.tenantId, keys);
  if (!db.reader) await reading;
  const productsWritten = upsertProducts(tx, batch.tenantId, chunk.products, chunk.variantKeys);
  // Observed at once: should the read or making the entries throw, the upsert's failure (a lost
  // connection) must not become an unhandled rejection; it is still awaited below.
  productsWritten.catch(() => undefined);
  const entries = historyEntries(await reading, chunk.items);
  const serialized = entries === null ? null : serializeEntries(entries);
  await productsWritten;
  return serialized;
}

/**
 * Writes a merged chunk in one transaction fenced by the batch's progress: the fence, the stored
 * rows the upserts will change (chunk-history.ts), one upsert per table, the products' history and
 * the `updated_at` of the products it records changes of, the merge's rejections, and the batch's
 * end when `options.onEnd` is given. The history's entries are made here while the server runs the
 * products upsert, and on a server read beside it (docs/performance.md). `merged` is the chunk, or
 * its merge to make in the same transaction when the merge reads stored rows, so that nothing
 * changes them in between. A lost connection or a server restart is thrown: it is the job's to
 * retry; only a write the data itself makes fail is reported, to be narrowed down.
 */
export async function writeChunk(
  db: Database,
  batch: BatchKey,
  merged: WritableChunk | MergeInTransaction,
  options: ChunkWriteOptions = {},
): Promise<ChunkWrite> {
  try {
    return await db.transaction(async (tx) => {
      // A merge that reads the catalog runs here, after the batch's row is locked as the fence
      // below would lock it: batch, then products, then variants, the order every writer keeps.
      if (typeof merged === 'function' && !(await lockUnfinishedBatch(tx, batch))) return null;
      const chunk = typeof merged === 'function' ? await merged(tx) : merged;
      const step = { upserted: chunk.upserted, failed: chunk.failures.length };
      const fence = await advanceBatch(tx, { ...batch, fromIndex: chunk.from, toIndex: chunk.to, ...step });
      if (!fence) return null;
      const entries = await upsertProductsMakingHistory(tx, db, batch, chunk);
      if (entries === null) throw new SkuOwnedElsewhereError();
      await insertSerializedHistory(tx, batch, entries);
      await touchProducts(tx, batch.tenantId, changedStoredProducts(entries));
      const writing = upsertVariants(tx, batch.tenantId, chunk.variants);
      options.onWriting?.();
      if ((await writing) !== chunk.variants.count) throw new SkuOwnedElsewhereError();
      await insertItemFailures(tx, batch, chunk.failures);
      const ended = options.onEnd ? await finishBatch(tx, batch, options.onEnd) : null;
      return { ...step, ended };
    });
  } catch (error) {
    if (error instanceof SkuOwnedElsewhereError) return 'sku-taken';
    if (isDataError(error)) return 'data-error';
    throw error;
  }
}
