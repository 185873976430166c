import type { Database } from '../db/database.ts';
import { BATCH_STATUS, TERMINAL_STATUSES } from '../ingestion/batch-status.ts';
import type { BatchOutcome } from './batch-outcome.ts';
import { findBatch, type BatchRow } from '../ingestion/batches/batch.repository.ts';
import { giveUpBatchRuns } from './batch-give-up.ts';
import { recordDeliveriesSql } from '../webhooks/delivery.repository.ts';
import {
  countBatchAttempt,
  finishBatch,
  recordJudgement,
  refundBatchAttempt,
  type BatchKey,
} from '../ingestion/batches/batch-progress.repository.ts';
import { BatchItems, type Judgement } from './batch-items.ts';
import { mergeChunk, type WritableChunk } from './chunk-merge.ts';
import { writeChunk, type ChunkStep } from './chunk-writer.ts';
import { recoverChunk } from './chunk-recovery.ts';
import type { ItemValidator } from '../validation/item-validator.ts';

/** Thrown when the process is shutting down: the batch is left as it is, to be resumed. */
export class ShutdownError extends Error {
  constructor() {
    super('shutting down');
  }
}

/**
 * A batch read, validated and its first unsettled chunk merged ahead of its turn, writing nothing.
 * The merge reads nothing stored (the upsert folds the rows into the catalog), so what the batch
 * before it writes meanwhile cannot make it stale. Its items are let go once merged: a run that
 * needs them again (more chunks, a sku owned by another product) reads them again.
 */
export interface PreparedBatch {
  batchId: string;
  items: BatchItems;
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
   * Reads and validates a batch and merges its first chunk, writing nothing. The worker prepares a
   * tenant's next batch while the current one is being written, so the CPU work of one overlaps the
   * database work of the other.
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

/** Where a batch's unsettled items start: validation (re)starts a batch from its first item. */
const resumeIndex = (batch: BatchRow) =>
  batch.status === BATCH_STATUS.accepted || batch.status === BATCH_STATUS.validating ? 0 : batch.next_index;

/**
 * Creates the processor. `chunkSize` items are written per transaction. Just over 120 lines: its
 * steps (recordJudgement, run, and the methods returned) are short and share `deps`; the chunk
 * pipeline itself lives in batch-items.ts, chunk-merge.ts, chunk-writer.ts and chunk-recovery.ts.
 */
export function createBatchProcessor(deps: {
  db: Database;
  validateItem: ItemValidator;
  chunkSize: number;
  maxAttempts: number;
}): BatchProcessor {
  const { db, validateItem, chunkSize } = deps;

  /**
   * Records what validation said (the counters, the invalid items) and moves the batch to
   * processing, in a transaction of its own: a client sees `processing` while the chunks are
   * written. Validation is deterministic, so a resumed batch validates again rather than storing
   * verdicts: an item that fails now failed then, and is already recorded.
   */
  function recordJudgementOf(batch: BatchKey, judged: Judgement) {
    return db.transaction((tx) => recordJudgement(tx, batch, judged));
  }

  /**
   * The common path: judge the items (or take the prepared judgement), record the failures, then
   * merge and write each chunk of the unsettled items; the last chunk's transaction ends the batch.
   * Returns early, having done nothing more, when another run ended the batch or holds it.
   */
  async function run(
    batch: BatchRow,
    prepared: PreparedBatch | null,
    signal: AbortSignal,
    onWriting: (() => void) | undefined,
  ): Promise<BatchOutcome> {
    const outcome: BatchOutcome = { status: null, upserted: 0, failed: 0 };
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    const items = prepared?.items ?? new BatchItems(db, key, validateItem);
    let preparedChunk = prepared?.chunk ?? null;

    const judged = await items.judge();
    if (!judged) return outcome; // ended by another run since this one started
    if (batch.status === BATCH_STATUS.validating) {
      if (!(await recordJudgementOf(key, judged))) return outcome;
      batch.next_index = 0;
      outcome.failed = judged.failures.length;
    }

    for (let from = batch.next_index; from < batch.received_count; from += chunkSize) {
      if (signal.aborted) throw new ShutdownError();
      const to = Math.min(from + chunkSize, batch.received_count);
      let chunk: WritableChunk;
      if (preparedChunk?.from === from && preparedChunk.to === to) chunk = preparedChunk;
      else {
        const chunkItems = await items.validIn(from, to);
        if (!chunkItems) return outcome; // ended by another run
        chunk = mergeChunk(from, to, chunkItems);
      }
      preparedChunk = null;
      const last = to >= batch.received_count;
      // After the last chunk is merged the items are not needed: they go before its rows are written.
      if (last) items.release();

      // A merge that read nothing and still rejected an item saw only the skus the chunk gives away:
      // the stored ones the item also claims would go unreported. Such a chunk takes the rare path.
      const written =
        chunk.failures.length > 0
          ? 'sku-taken'
          : await writeChunk(db, key, chunk, { onEnd: last ? recordDeliveriesSql : undefined, onWriting });
      let step: ChunkStep | null = null;
      if (written === 'sku-taken' || written === 'data-error') {
        step = await recoverChunk(db, key, items, { from, to }, written, onWriting);
      } else if (written) {
        outcome.status = written.ended;
        step = written;
      }
      if (!step) return outcome; // another run holds this batch; it will finish it
      outcome.upserted += step.upserted;
      outcome.failed += step.failed;
    }
    // Ended already unless the last chunk took the rare path, or a run stopped before ending it.
    outcome.status ??= await finishBatch(db, key, recordDeliveriesSql);
    return outcome;
  }

  return {
    async prepareBatch(tenantId, batchId) {
      const batch = await findBatch(db, tenantId, batchId);
      if (!batch || TERMINAL_STATUSES.includes(batch.status)) return null;
      const items = new BatchItems(db, { tenantId, batchId }, validateItem);
      const from = resumeIndex(batch);
      const to = Math.min(from + chunkSize, batch.received_count);
      const chunkItems = (await items.judge()) && (await items.validIn(from, to));
      if (!chunkItems) return null; // ended meanwhile
      const chunk = from < to ? mergeChunk(from, to, chunkItems) : null;
      items.release();
      return { batchId, items, chunk };
    },

    async processBatch(tenantId, batchId, signal, pipeline = {}) {
      const prepared = pipeline.prepared?.batchId === batchId ? pipeline.prepared : null;
      // Every run is counted before it does anything: a run that takes its process down records
      // nothing after that.
      const batch = await countBatchAttempt(db, { tenantId, batchId });
      if (!batch) return { status: null, upserted: 0, failed: 0 }; // missing, or finished already
      if (batch.attempts > deps.maxAttempts) {
        // Past maxAttempts this run gives up. Only the first to do so reads the body for the items'
        // keys: a run counted beyond it was a give-up that did not finish.
        const readKeys = batch.attempts === deps.maxAttempts + 1;
        const outcome = await giveUpBatchRuns(db, tenantId, batchId, { readKeys });
        return outcome ?? { status: null, upserted: 0, failed: 0 };
      }
      // A run that follows one that got nowhere may follow a crash while the next batch was being
      // read ahead: it reads nothing ahead, so a batch whose reading kills the process is read in its
      // own turn only, where its runs are counted, and the batch before it is not blamed.
      const onWriting = batch.attempts > 1 ? undefined : pipeline.onWriting;
      try {
        return await run(batch, prepared, signal, onWriting);
      } catch (error) {
        if (!signal.aborted) throw error;
        // Stopped by a shutdown, at a chunk boundary or by the database closing under it: not the
        // batch's doing. Giving the count back may fail once the database is closed; then it stays.
        await refundBatchAttempt(db, { tenantId, batchId }).catch(() => undefined);
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
