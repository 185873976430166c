import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
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
import { BATCH_STATUS, TERMINAL_STATUSES, type BatchStatus } from './batch-status.ts';
import { findBatch, type BatchRow } from './batch.repository.ts';
import { giveUpBatchRuns } from './batch-give-up.ts';
import {
  advanceBatch,
  finishBatch,
  insertItemFailures,
  readItems,
  recordValidation,
  releaseBatchRun,
  startBatchRun,
  type ItemFailure,
} from './batch-progress.repository.ts';
import type { ItemValidator } from './item-validator.ts';
import { internalError, isDataError, itemKeys } from './item-failures.ts';

/** Thrown when the process is shutting down: the batch is left as it is, to be resumed. */
export class ShutdownError extends Error {
  constructor() {
    super('shutting down');
  }
}

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

/** What a finished run of {@link BatchProcessor.processBatch} did, for metrics and logs. */
export interface BatchOutcome {
  status: BatchStatus | null;
  upserted: number;
  failed: number;
}

type ChunkItems = Array<{ index: number; item: FullProductIngest }>;
type ValidItems = Map<number, FullProductIngest>;

/** Every item of a batch judged: the valid ones by index, and the records of the others. */
interface Verdicts {
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
interface WritableChunk {
  from: number;
  to: number;
  products: SerializedRows;
  variants: SerializedRows;
  upserted: number;
  /** The items rejected by the merge (`sku_conflict`), with their keys. */
  failures: ItemFailure[];
}

/** A batch read, parsed and judged ahead of its turn; see {@link BatchProcessor.prepareBatch}. */
export interface PreparedBatch {
  batchId: string;
  validCount: number;
  failures: ItemFailure[];
  /**
   * Its first unsettled chunk, merged. The merge reads nothing stored (the upsert folds the rows into
   * the catalog), so what the batch before it writes meanwhile cannot make it stale. No parsed item
   * is kept with it: a run that needs the items again (the batch has more chunks, or a sku turned out
   * to belong to another product) reads them again.
   */
  chunk: WritableChunk | null;
}

/** What the worker hands a run when it pipelines a tenant's batches. */
export interface PipelineOptions {
  /** This batch, prepared while the previous one was being written. */
  prepared?: PreparedBatch | null;
  /**
   * Called when a chunk's rows are on their way to the database: the time to prepare the next
   * batch, whose parsing would otherwise hold up this one's statements on the event loop.
   */
  onWriting?: () => void;
}

/** Validates and applies one batch; safe to run again on a batch interrupted at any point. */
export interface BatchProcessor {
  /**
   * Reads, parses and validates a batch and merges its first chunk, writing nothing. The worker
   * prepares a tenant's next batch while the current one is being written, so the CPU work of one
   * overlaps the database work of the other.
   */
  prepareBatch(tenantId: string, batchId: string): Promise<PreparedBatch | null>;
  processBatch(
    tenantId: string,
    batchId: string,
    signal: AbortSignal,
    pipeline?: PipelineOptions,
  ): Promise<BatchOutcome>;
  /**
   * After a run that ended in an error: once `maxAttempts` runs without progress have been counted,
   * fails the batch's unsettled items as `internal_error` and ends it. Every run counts from its
   * start (a run cut short by a shutdown gives its count back, and progress starts the count again),
   * so runs that killed their process count too.
   */
  settleFailedRun(tenantId: string, batchId: string): Promise<void>;
}

/** Items validated between two turns of the event loop. */
const VALIDATION_SLICE = 100;

/** Creates the processor. `chunkSize` items are written per transaction. */
export function createBatchProcessor(deps: {
  db: Database;
  validateItem: ItemValidator;
  chunkSize: number;
  maxAttempts: number;
}): BatchProcessor {
  const { db, validateItem, chunkSize } = deps;

  /**
   * Judges every item. Validation is deterministic, so a resumed batch re-validates rather than
   * storing verdicts: an item that fails now failed then, and is already recorded. The loop yields
   * now and then, so a long batch does not hold up the HTTP requests this process also serves.
   */
  async function validateAll(payloads: readonly unknown[]) {
    const valid: ValidItems = new Map();
    const failures: ItemFailure[] = [];
    for (let idx = 0; idx < payloads.length; idx++) {
      if (idx % VALIDATION_SLICE === VALIDATION_SLICE - 1) await yieldToEventLoop();
      const payload = payloads[idx];
      const verdict = validateItem(payload);
      if (verdict.ok) valid.set(idx, verdict.item);
      else failures.push({ index: idx, ...itemKeys(payload, verdict.errors), errors: verdict.errors });
    }
    return { valid, failures };
  }

  /** Reads a batch's items and judges them; null when its body is gone (the batch has ended). */
  async function readVerdicts(key: { tenantId: string; batchId: string }): Promise<Verdicts | null> {
    const stored = await readItems(db, key);
    return stored && validateAll(stored);
  }

  /** Phase 1: record the invalid items and the counters, and move the batch to processing. */
  async function recordVerdicts(batch: BatchRow, judged: { validCount: number; failures: ItemFailure[] }) {
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    return db.transaction(async (tx) => {
      // The batch row first, as every other writer of a batch locks it, then its error records.
      const recorded = await recordValidation(tx, {
        ...key,
        ok: judged.validCount,
        failed: judged.failures.length,
      });
      if (recorded) await insertItemFailures(tx, key, judged.failures);
      return recorded;
    });
  }

  /** The valid items in [from, to), in index order. */
  function validItemsIn(known: ValidItems, from: number, to: number) {
    const items: ChunkItems = [];
    for (let i = from; i < to; i++) {
      const item = known.get(i);
      if (item) items.push({ index: i, item });
    }
    return items;
  }

  /** The rows of a merge, serialized, and the records of the items it rejected. */
  function toWritable(from: number, to: number, items: ChunkItems, merged: MergedChunk): WritableChunk {
    const byIndex =
      merged.rejected.length > 0 ? new Map(items.map(({ index, item }) => [index, item])) : null;
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
  const mergeChunk = (from: number, to: number, items: ChunkItems) =>
    toWritable(from, to, items, mergeItems(items));

  /** Merges the items of [from, to) on top of the stored variants they name (the rare path). */
  async function mergeChunkWithCatalog(tenantId: string, from: number, to: number, items: ChunkItems) {
    const skus = [...new Set(items.flatMap(({ item }) => item.variants.map((v) => v.sku)))];
    return toWritable(from, to, items, mergeItems(items, await findVariantsBySku(db, tenantId, skus)));
  }

  /** The prepared rows of [from, to), if `prepared` holds that chunk; taken, so they are not held twice. */
  function preparedChunk(prepared: PreparedBatch | null, from: number, to: number): WritableChunk | null {
    const chunk = prepared?.chunk;
    if (!prepared || !chunk || chunk.from !== from || chunk.to !== to) return null;
    prepared.chunk = null;
    return chunk;
  }

  /**
   * Writes a chunk in one transaction; null when another run already did. Throws
   * {@link SkuOwnedElsewhereError}, having written nothing, when a sku belongs to another product.
   */
  async function applyChunk(
    batch: BatchRow,
    chunk: WritableChunk,
    pipeline: PipelineOptions,
  ): Promise<{ upserted: number; failed: number } | null> {
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    return db.transaction(async (tx) => {
      const step = { upserted: chunk.upserted, failed: chunk.failures.length };
      const fence = await advanceBatch(tx, { ...key, fromIndex: chunk.from, toIndex: chunk.to, ...step });
      if (!fence) return null;
      await upsertProducts(tx, key.tenantId, chunk.products);
      const writing = upsertVariants(tx, key.tenantId, chunk.variants);
      pipeline.onWriting?.();
      if ((await writing) !== chunk.variants.count) throw new SkuOwnedElsewhereError();
      await insertItemFailures(tx, key, chunk.failures);
      return step;
    });
  }

  /**
   * Writes a chunk's rows; when the data makes the write fail, narrows the chunk down item by item.
   * `'sku-taken'` when a sku belongs to another product (nothing written).
   */
  async function tryChunk(batch: BatchRow, chunk: WritableChunk, pipeline: PipelineOptions) {
    try {
      return await applyChunk(batch, chunk, pipeline);
    } catch (error) {
      if (error instanceof SkuOwnedElsewhereError) return 'sku-taken' as const;
      // A lost connection or a server restart is the job's to retry; only a write the data itself
      // makes fail is narrowed down.
      if (!isDataError(error)) throw error;
      return applyChunkItemByItem(batch, chunk.from, chunk.to, pipeline);
    }
  }

  /**
   * Writes the rows of [from, to). When a sku turns out to belong to another product, the items are
   * read again and merged against the stored variants, which rejects the items at fault, and the
   * chunk is written again. Reading is not writing: a failure to read is never narrowed down.
   */
  async function writeChunk(
    batch: BatchRow,
    chunk: WritableChunk,
    pipeline: PipelineOptions,
    /** The batch's items, when the run still holds them. */
    held: Verdicts | null,
  ) {
    const written = await tryChunk(batch, chunk, pipeline);
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
    const again = await tryChunk(batch, merged, pipeline);
    // Only a second writer of the tenant's catalog could take a sku between the look-up and the write.
    if (again === 'sku-taken') throw new Error('A sku of the chunk was taken while it was being merged');
    return again;
  }

  /**
   * A chunk whose write failed is retried item by item, so one bad item cannot sink the others;
   * an item that still cannot be written is recorded as `internal_error`. The items are read again:
   * this is the rare path, and the common one keeps none while it writes.
   */
  async function applyChunkItemByItem(batch: BatchRow, from: number, to: number, pipeline: PipelineOptions) {
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    const verdicts = await readVerdicts(key);
    if (!verdicts) return null; // ended by another run
    const totals = { upserted: 0, failed: 0 };
    for (let i = from; i < to; i++) {
      const single = validItemsIn(verdicts.valid, i, i + 1);
      let step: { upserted: number; failed: number } | null;
      try {
        step = await applyChunk(batch, await mergeChunkWithCatalog(key.tenantId, i, i + 1, single), pipeline);
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

  /** Where a batch's unsettled items start: validation (re)starts a batch from its first item. */
  const resumeIndex = (batch: BatchRow) =>
    batch.status === BATCH_STATUS.accepted || batch.status === BATCH_STATUS.validating ? 0 : batch.next_index;

  /** Validates the batch (unless `prepared` did) and writes its unsettled items, chunk by chunk. */
  async function run(
    batch: BatchRow,
    prepared: PreparedBatch | null,
    signal: AbortSignal,
    pipeline: PipelineOptions,
  ): Promise<BatchOutcome> {
    const outcome: BatchOutcome = { status: null, upserted: 0, failed: 0 };
    const { tenant_id: tenantId, batch_id: batchId } = batch;
    const key = { tenantId, batchId };
    // A run that follows one that got nowhere may follow a crash while the next batch was being read
    // ahead: it reads nothing ahead, so a batch whose reading kills the process is read in its own
    // turn only, where its runs are counted, and the batch before it is not blamed.
    const chunkPipeline = batch.attempts > 1 ? { ...pipeline, onWriting: undefined } : pipeline;

    // The batch's items, while this run needs them; a prepared batch brings none.
    let verdicts: Verdicts | null = null;
    let judged: Pick<PreparedBatch, 'validCount' | 'failures'>;
    if (prepared) judged = prepared;
    else {
      verdicts = await readVerdicts(key);
      if (!verdicts) return outcome; // ended by another run since this one started
      judged = { validCount: verdicts.valid.size, failures: verdicts.failures };
    }
    if (batch.status === BATCH_STATUS.validating) {
      if (!(await recordVerdicts(batch, judged))) return outcome;
      batch.next_index = 0;
      outcome.failed = judged.failures.length;
    }

    for (let from = batch.next_index; from < batch.received_count; from += chunkSize) {
      if (signal.aborted) throw new ShutdownError();
      const to = Math.min(from + chunkSize, batch.received_count);
      // The rows merged ahead of time, else the items read again if this run has none (reading is
      // not writing, so its failure is never narrowed down below).
      let chunk = preparedChunk(prepared, from, to);
      if (!chunk) {
        verdicts ??= await readVerdicts(key);
        if (!verdicts) return outcome; // ended by another run
        chunk = mergeChunk(from, to, validItemsIn(verdicts.valid, from, to));
      }
      // After the last chunk the batch's items are not needed: they go before its rows are written.
      if (to >= batch.received_count) verdicts = null;
      const step = await writeChunk(batch, chunk, chunkPipeline, verdicts);
      if (!step) return outcome; // another run holds this batch; it will finish it
      outcome.upserted += step.upserted;
      outcome.failed += step.failed;
    }
    outcome.status = await finishBatch(db, key);
    return outcome;
  }

  return {
    async prepareBatch(tenantId, batchId) {
      const batch = await findBatch(db, tenantId, batchId);
      if (!batch || TERMINAL_STATUSES.includes(batch.status)) return null;
      const verdicts = await readVerdicts({ tenantId, batchId });
      if (!verdicts) return null; // ended meanwhile
      const { valid, failures } = verdicts;
      const judged = { batchId, validCount: valid.size, failures };
      const from = resumeIndex(batch);
      const to = Math.min(from + chunkSize, batch.received_count);
      if (from >= to) return { ...judged, chunk: null };
      return { ...judged, chunk: mergeChunk(from, to, validItemsIn(valid, from, to)) };
    },

    async processBatch(tenantId, batchId, signal, pipeline = {}) {
      const prepared = pipeline.prepared?.batchId === batchId ? pipeline.prepared : null;
      // Every run is counted before it does anything: a run that takes its process down records
      // nothing after that.
      const batch = await startBatchRun(db, tenantId, batchId);
      if (!batch) return { status: null, upserted: 0, failed: 0 }; // missing, or finished already
      if (batch.attempts > deps.maxAttempts) {
        // Past maxAttempts this run gives up. Only the first to do so reads the body for the items'
        // keys: a run counted beyond it was a give-up that did not finish.
        const readKeys = batch.attempts === deps.maxAttempts + 1;
        const outcome = await giveUpBatchRuns(db, tenantId, batchId, { readKeys });
        return outcome ?? { status: null, upserted: 0, failed: 0 };
      }
      try {
        return await run(batch, prepared, signal, pipeline);
      } catch (error) {
        if (!signal.aborted) throw error;
        // Stopped by a shutdown, at a chunk boundary or by the database closing under it: not the
        // batch's doing. Giving the count back may fail once the database is closed; then it stays.
        await releaseBatchRun(db, tenantId, batchId).catch(() => undefined);
        throw new ShutdownError();
      }
    },

    async settleFailedRun(tenantId, batchId) {
      const batch = await findBatch(db, tenantId, batchId);
      if (!batch || TERMINAL_STATUSES.includes(batch.status) || batch.attempts < deps.maxAttempts) return;
      // Beyond maxAttempts, the run that failed was itself giving up.
      await giveUpBatchRuns(db, tenantId, batchId, { readKeys: batch.attempts === deps.maxAttempts });
    },
  };
}
