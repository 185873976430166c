import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Database } from '../db/database.ts';
import { BATCH_STATUS, TERMINAL_STATUSES, type BatchStatus } from './batch-status.ts';
import { findBatch, type BatchRow } from './batch.repository.ts';
import { giveUpBatchRuns } from './batch-give-up.ts';
import {
  finishBatch,
  insertItemFailures,
  readItems,
  recordValidation,
  releaseBatchRun,
  startBatchRun,
  type ItemFailure,
} from './batch-progress.repository.ts';
import {
  createChunkWriter,
  mergeChunk,
  validItemsIn,
  type ValidItems,
  type Verdicts,
  type WritableChunk,
} from './chunk-writer.ts';
import type { ItemValidator } from './item-validator.ts';
import { itemKeys } from './item-failures.ts';

/** Thrown when the process is shutting down: the batch is left as it is, to be resumed. */
export class ShutdownError extends Error {
  constructor() {
    super('shutting down');
  }
}

/** What a finished run of {@link BatchProcessor.processBatch} did, for metrics and logs. */
export interface BatchOutcome {
  status: BatchStatus | null;
  upserted: number;
  failed: number;
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

  const chunks = createChunkWriter({ db, readVerdicts });

  /** The prepared rows of [from, to), if `prepared` holds that chunk; taken, so they are not held twice. */
  function preparedChunk(prepared: PreparedBatch | null, from: number, to: number): WritableChunk | null {
    const chunk = prepared?.chunk;
    if (!prepared || !chunk || chunk.from !== from || chunk.to !== to) return null;
    prepared.chunk = null;
    return chunk;
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
      const step = await chunks.write(batch, chunk, chunkPipeline, verdicts);
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
