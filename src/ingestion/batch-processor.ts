import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Database } from '../db/database.ts';
import type { FieldError } from '../http/errors.ts';
import type { FullProductIngest } from '../catalog/product-schema.ts';
import { findVariantsBySku, upsertProducts, upsertVariants } from '../catalog/catalog.repository.ts';
import { mergeItems } from '../catalog/merge-items.ts';
import { BATCH_STATUS, TERMINAL_STATUSES, type BatchStatus } from './batch-status.ts';
import { findBatch, type BatchRow } from './batch.repository.ts';
import {
  advanceBatch,
  countFailedAttempt,
  findFailedIndices,
  finishBatch,
  giveUpBatch,
  insertItemFailures,
  moveStatus,
  readItems,
  recordValidation,
  type ItemFailure,
} from './batch-progress.repository.ts';
import type { ItemValidator } from './item-validator.ts';

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

/** Validates and applies one batch; safe to run again on a batch interrupted at any point. */
export interface BatchProcessor {
  processBatch(tenantId: string, batchId: string, signal: AbortSignal): Promise<BatchOutcome>;
  /** Records a failed attempt; past the limit, fails the batch's unsettled items and ends it. */
  recordFailedAttempt(tenantId: string, batchId: string): Promise<void>;
}

type ValidItems = Map<number, FullProductIngest>;

/** Items validated between two turns of the event loop. */
const VALIDATION_SLICE = 100;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The `external_id` and `sku` an errors page shows for a failed item: the item's external_id if it
 * is a string; the sku of the variant the first error is about, else of the first variant.
 */
export function itemKeys(
  item: unknown,
  errors: readonly FieldError[],
): { external_id: string | null; sku: string | null } {
  if (!isRecord(item)) return { external_id: null, sku: null };
  const variants = Array.isArray(item.variants) ? (item.variants as unknown[]) : [];
  const skuOf = (index: number) => {
    const variant = variants[index];
    return isRecord(variant) && typeof variant.sku === 'string' ? variant.sku : null;
  };
  const about = /^variants\[(\d+)\]/.exec(errors[0]?.field ?? '');
  return {
    external_id: typeof item.external_id === 'string' ? item.external_id : null,
    sku: (about ? skuOf(Number(about[1])) : null) ?? skuOf(0),
  };
}

/**
 * Whether a failed write says something about the data (so retrying the item alone may isolate
 * it) rather than about the connection or the server (so the whole job should be retried later):
 * PostgreSQL's data-exception (22) and integrity (23) classes, and errors without a SQLSTATE that
 * are not connection errors.
 */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string')
    return !(error instanceof Error && /connect|terminat|ECONN|timeout/i.test(error.message));
  return code.startsWith('22') || code.startsWith('23') || code === 'XX000';
}

const internalError = (index: number, item: unknown): ItemFailure => {
  const errors: FieldError[] = [
    {
      field: '',
      code: 'internal_error',
      message: 'The item could not be written; this is not a fault of the item.',
    },
  ];
  return { index, ...itemKeys(item, errors), errors };
};

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

  /** Phase 1: record the invalid items and the counters, and move the batch to processing. */
  async function recordVerdicts(batch: BatchRow, valid: ValidItems, failures: ItemFailure[]) {
    const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
    return db.transaction(async (tx) => {
      await insertItemFailures(tx, key, failures);
      return recordValidation(tx, { ...key, ok: valid.size, failed: failures.length });
    });
  }

  /** The valid items in [from, to), in index order. */
  function validItemsIn(known: ValidItems, from: number, to: number) {
    const items: Array<{ index: number; item: FullProductIngest }> = [];
    for (let i = from; i < to; i++) {
      const item = known.get(i);
      if (item) items.push({ index: i, item });
    }
    return items;
  }

  /** Writes items of [from, to) in one transaction; false when another run already did. */
  async function applyChunk(
    batch: BatchRow,
    from: number,
    to: number,
    items: Array<{ index: number; item: FullProductIngest }>,
  ): Promise<{ upserted: number; failed: number } | null> {
    const tenantId = batch.tenant_id;
    return db.transaction(async (tx) => {
      const skus = [...new Set(items.flatMap(({ item }) => item.variants.map((v) => v.sku)))];
      const merged = mergeItems(items, await findVariantsBySku(tx, tenantId, skus));
      const step = { upserted: merged.applied.length, failed: merged.rejected.length };
      const fence = await advanceBatch(tx, {
        tenantId,
        batchId: batch.batch_id,
        fromIndex: from,
        toIndex: to,
        ...step,
        finalStatus: null,
      });
      if (!fence) return null;
      await upsertProducts(tx, tenantId, merged.products);
      await upsertVariants(tx, tenantId, merged.variants);
      const byIndex = new Map(items.map(({ index, item }) => [index, item]));
      const failures = merged.rejected.map(({ index, errors }) => ({
        index,
        ...itemKeys(byIndex.get(index), errors),
        errors,
      }));
      await insertItemFailures(tx, { tenantId, batchId: batch.batch_id }, failures);
      return step;
    });
  }

  /**
   * A chunk whose write failed is retried item by item, so one bad item cannot sink the others;
   * an item that still cannot be written is recorded as `internal_error`.
   */
  async function applyChunkItemByItem(
    batch: BatchRow,
    from: number,
    to: number,
    items: Array<{ index: number; item: FullProductIngest }>,
  ) {
    const totals = { upserted: 0, failed: 0 };
    for (let i = from; i < to; i++) {
      const single = items.filter(({ index }) => index === i);
      let step: { upserted: number; failed: number } | null;
      try {
        step = await applyChunk(batch, i, i + 1, single);
      } catch (error) {
        if (!isDataError(error)) throw error;
        step = await db.transaction(async (tx) => {
          const key = { tenantId: batch.tenant_id, batchId: batch.batch_id };
          const fence = await advanceBatch(tx, {
            ...key,
            fromIndex: i,
            toIndex: i + 1,
            upserted: 0,
            failed: 1,
            finalStatus: null,
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
    async processBatch(tenantId, batchId, signal) {
      const outcome: BatchOutcome = { status: null, upserted: 0, failed: 0 };
      const batch = await findBatch(db, tenantId, batchId);
      if (!batch || TERMINAL_STATUSES.includes(batch.status)) return outcome;
      const key = { tenantId, batchId };

      if (batch.status === BATCH_STATUS.accepted) {
        await moveStatus(db, { ...key, from: BATCH_STATUS.accepted, to: BATCH_STATUS.validating });
      }
      const { valid: known, failures } = await validateAll(await readItems(db, key));
      if (batch.status === BATCH_STATUS.accepted || batch.status === BATCH_STATUS.validating) {
        if (!(await recordVerdicts(batch, known, failures))) return outcome;
        batch.next_index = 0;
        outcome.failed = failures.length;
      }

      for (let from = batch.next_index; from < batch.received_count; from += chunkSize) {
        if (signal.aborted) throw new ShutdownError();
        const to = Math.min(from + chunkSize, batch.received_count);
        const items = validItemsIn(known, from, to);
        let step: { upserted: number; failed: number } | null;
        try {
          step = await applyChunk(batch, from, to, items);
        } catch (error) {
          // A lost connection or a server restart is the job's to retry; only a write the data
          // itself makes fail is narrowed down item by item.
          if (!isDataError(error)) throw error;
          step = await applyChunkItemByItem(batch, from, to, items);
        }
        if (!step) return outcome; // another run holds this batch; it will finish it
        outcome.upserted += step.upserted;
        outcome.failed += step.failed;
      }
      outcome.status = await finishBatch(db, key);
      return outcome;
    },

    async recordFailedAttempt(tenantId, batchId) {
      const attempts = await countFailedAttempt(db, tenantId, batchId);
      if (attempts < deps.maxAttempts) return;
      const batch = await findBatch(db, tenantId, batchId);
      if (!batch || TERMINAL_STATUSES.includes(batch.status)) return;
      const key = { tenantId, batchId };
      const unvalidated = batch.status !== BATCH_STATUS.processing;
      const from = unvalidated ? 0 : batch.next_index;
      const payloads = await readItems(db, key);
      await db.transaction(async (tx) => {
        const recorded = await findFailedIndices(tx, { ...key, fromIndex: from });
        const failures: ItemFailure[] = [];
        for (let idx = from; idx < payloads.length; idx++) {
          if (!recorded.has(idx)) failures.push(internalError(idx, payloads[idx]));
        }
        await insertItemFailures(tx, key, failures);
        await giveUpBatch(tx, { ...key, failedCount: failures.length, unvalidated });
      });
    },
  };
}
