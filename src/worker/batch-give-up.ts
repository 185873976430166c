import type { Database } from '../db/database.ts';
import type { BatchOutcome } from './batch-outcome.ts';
import { BATCH_STATUS } from '../ingestion/batch-status.ts';
import {
  findFailedIndices,
  giveUpBatch,
  insertItemFailures,
  lockUnfinishedBatch,
  readItems,
} from '../ingestion/batches/batch-progress.repository.ts';
import { internalError, type ItemFailure } from '../validation/item-errors.ts';
import { recordDeliveriesSql } from '../webhooks/delivery.repository.ts';

/**
 * Ends a batch that could not be processed (docs/reference.md §5): its unsettled items fail as
 * `internal_error` and it becomes `failed`, whatever it wrote before. Where the unsettled items
 * start is read under the row's lock, so a chunk or a validation that commits meanwhile is never
 * counted twice. Returns what it did, or null when the batch had already ended.
 *
 * The failures name each item's keys as the stored body gives them, unless `readKeys` is false:
 * reading the body may be what takes the process down, so a give-up that did not finish is
 * followed by one that fails the items without their keys.
 */
export async function giveUpBatchRuns(
  db: Database,
  tenantId: string,
  batchId: string,
  { readKeys }: { readKeys: boolean },
): Promise<BatchOutcome | null> {
  const key = { tenantId, batchId };
  // No body: the batch has ended meanwhile (the lock below finds it so), or its items are failed
  // without their keys.
  const payloads = (readKeys ? await readItems(db, key) : null) ?? [];
  return db.transaction(async (tx) => {
    const batch = await lockUnfinishedBatch(tx, key);
    if (!batch) return null;
    const unvalidated = batch.status !== BATCH_STATUS.processing;
    const from = unvalidated ? 0 : batch.next_index;
    const recorded = await findFailedIndices(tx, { ...key, fromIndex: from });
    const failures: ItemFailure[] = [];
    for (let idx = from; idx < batch.received_count; idx++) {
      if (!recorded.has(idx)) failures.push(internalError(idx, payloads[idx]));
    }
    await insertItemFailures(tx, key, failures);
    const status = await giveUpBatch(
      tx,
      { ...key, failedCount: failures.length, unvalidated },
      recordDeliveriesSql,
    );
    return status === null ? null : { status, upserted: 0, failed: failures.length };
  });
}
