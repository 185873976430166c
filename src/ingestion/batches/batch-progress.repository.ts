import { queryRow, type Queryable } from '../../db/database.ts';
import { HIDDEN_TENANT } from '../../db/hidden-tenant.ts';
import type { ItemFailure } from '../../validation/item-errors.ts';
import { SETTLED_STATUS_SQL, STATUS_SQL, UNFINISHED_SQL, type BatchStatus } from '../batch-status.ts';
import { BATCH_COLUMNS, toBatchRow, type BatchKey, type BatchRow } from './batch.repository.ts';

export type { BatchKey };

/**
 * SQL of the `batches` table, worker side: reading items and recording progress. A statement on one
 * batch names its tenant as {@link HIDDEN_TENANT}, so that a tenant newer than the table's last
 * ANALYZE still finds its batch by the primary key.
 */

/**
 * What else a batch's end writes in the statement that ends it: a statement over the CTE named
 * `ended` (its one row, the batch's new status), which is `recordDeliveriesSql` of
 * src/webhooks/delivery.repository.ts, the webhook outbox. Handed in by the worker, so the batches
 * table's SQL stays below the webhooks that read it.
 */
export type OnBatchEnd = (ended: string) => string;

/**
 * `updated_at` for a change: now, at millisecond precision, but always at least 1 ms after the
 * previous value, so every visible change moves it forward even within one millisecond.
 */
const TOUCH_VALUE = `GREATEST(date_trunc('milliseconds', clock_timestamp()), updated_at + interval '1 millisecond')`;
const TOUCH = `updated_at = ${TOUCH_VALUE}`;

/**
 * The tenant's oldest unfinished batches, at most `limit`, oldest first: batches of one tenant are
 * applied in submission order.
 */
export async function findOldestUnfinishedBatches(
  db: Queryable,
  tenantId: string,
  limit: number,
): Promise<string[]> {
  const rows = await db.query<{ id: string }>(
    `SELECT id::text AS id FROM batches WHERE tenant_id = $1 AND status IN ${UNFINISHED_SQL} ORDER BY seq LIMIT $2`,
    [tenantId, limit],
  );
  return rows.map((row) => row.id);
}

/** Every item of a batch, in index order, as submitted; null once the batch has ended (its body is gone). */
export async function readItems(db: Queryable, batch: BatchKey): Promise<unknown[] | null> {
  const rows = await db.query<{ body: string }>(
    `SELECT body FROM batch_payloads WHERE tenant_id = $1 AND batch_id = $2`,
    [batch.tenantId, batch.batchId],
  );
  const body = rows[0]?.body;
  // The API stored this body after checking it is {"items": [...]}.
  return body === undefined ? null : (JSON.parse(body) as { items: unknown[] }).items;
}

/**
 * Counts a run of the worker on an unfinished batch before the run does anything, moves an
 * `accepted` batch to `validating` in the same statement, and returns the batch as it now stands,
 * or null when it is missing or finished. The count is of runs since the batch last made progress
 * (validation and every chunk reset it): a batch that kills its process, and so never records its
 * own failure, is told apart from one that is merely interrupted.
 */
export async function countBatchAttempt(db: Queryable, batch: BatchKey): Promise<BatchRow | null> {
  return queryRow(
    db,
    `UPDATE batches SET attempts = attempts + 1,
            status = CASE WHEN status = ${STATUS_SQL.accepted} THEN ${STATUS_SQL.validating} ELSE status END,
            updated_at = CASE WHEN status = ${STATUS_SQL.accepted} THEN ${TOUCH_VALUE} ELSE updated_at END
     WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2 AND status IN ${UNFINISHED_SQL}
     RETURNING ${BATCH_COLUMNS}`,
    [batch.tenantId, batch.batchId],
    toBatchRow,
  );
}

/** Takes back the count of a run that stopped because its process was shutting down. */
export async function refundBatchAttempt(db: Queryable, batch: BatchKey): Promise<void> {
  await db.query(
    `UPDATE batches SET attempts = GREATEST(attempts - 1, 0) WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2`,
    [batch.tenantId, batch.batchId],
  );
}

/**
 * Records what validation said of a batch: the counters and the move to `processing`, guarded on
 * the batch still being in `validating` (so a second worker's late write changes nothing), then the
 * invalid items' records, in the caller's transaction. Progress: the count of runs starts again.
 * The batch row first, as every other writer of a batch locks it. False, having written nothing,
 * when the batch is no longer validating.
 */
export async function recordJudgement(
  tx: Queryable,
  batch: BatchKey,
  judged: { validCount: number; failures: readonly ItemFailure[] },
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE batches SET status = ${STATUS_SQL.processing}, validated_ok = $3, validated_failed = $4, failed = $4,
            attempts = 0, ${TOUCH}
     WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2 AND status = ${STATUS_SQL.validating} RETURNING 1`,
    [batch.tenantId, batch.batchId, judged.validCount, judged.failures.length],
  );
  if (rows.length === 0) return false;
  await insertItemFailures(tx, batch, judged.failures);
  return true;
}

/**
 * Settles the items in [fromIndex, toIndex): adds to the counters, moves the resume point and, at
 * the end, the status; the count of runs starts again. The `next_index = fromIndex` guard is the
 * fence that makes the chunk apply once: a worker that lost its claim finds no row and its
 * transaction is rolled back.
 */
export async function advanceBatch(
  tx: Queryable,
  step: {
    tenantId: string;
    batchId: string;
    fromIndex: number;
    toIndex: number;
    upserted: number;
    failed: number;
  },
): Promise<{ upserted: number; failed: number } | null> {
  // It never ends a batch: finishBatch and giveUpBatch do, and drop its body as they do.
  const rows = await tx.query<{ upserted: number; failed: number }>(
    `UPDATE batches SET next_index = $4, upserted = upserted + $5, failed = failed + $6, attempts = 0, ${TOUCH}
     WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2 AND next_index = $3 AND status = ${STATUS_SQL.processing}
     RETURNING upserted, failed`,
    [step.tenantId, step.batchId, step.fromIndex, step.toIndex, step.upserted, step.failed],
  );
  return rows[0] ?? null;
}

/**
 * Deletes the stored body of the batch `ended` (a CTE returning its status) ended, in the statement
 * that ends it: nothing reads a body once its batch is terminal, and each is ~2 MB.
 */
const dropBody = (ended: string) =>
  `DELETE FROM batch_payloads WHERE tenant_id = $1 AND batch_id = $2 AND EXISTS (SELECT 1 FROM ${ended})`;

/**
 * Moves a settled batch (next_index = received_count) to its terminal status, drops its body, and
 * records its webhook deliveries (the outbox, docs/reference.md §10.1) in the same statement.
 */
export async function finishBatch(
  tx: Queryable,
  batch: BatchKey,
  onEnd: OnBatchEnd,
): Promise<BatchStatus | null> {
  const rows = await tx.query<{ status: BatchStatus }>(
    `WITH ended AS (
       UPDATE batches SET status = ${SETTLED_STATUS_SQL}, ${TOUCH}
       WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2 AND status = ${STATUS_SQL.processing} AND next_index = received_count
       RETURNING status
     ), dropped AS (${dropBody('ended')}), outbox AS (${onEnd('ended')})
     SELECT status FROM ended`,
    [batch.tenantId, batch.batchId],
  );
  return rows[0]?.status ?? null;
}

/**
 * A text as the errors page stores it: PostgreSQL text holds neither U+0000 nor lone surrogates, a
 * client's key may, so stored copies of keys, fields and messages hold U+FFFD in their place.
 */
export const storable = (text: string) => text.toWellFormed().replaceAll('\u0000', '\uFFFD');

/** Stores item failures; an item already recorded keeps its first record (idempotent on retry). */
export async function insertItemFailures(
  tx: Queryable,
  batch: BatchKey,
  failures: readonly ItemFailure[],
): Promise<void> {
  if (failures.length === 0) return;
  const rows = failures.map((f) => ({
    idx: f.index,
    external_id: f.external_id === null ? null : storable(f.external_id),
    sku: f.sku === null ? null : storable(f.sku),
    errors: f.errors.map((e) => ({ field: storable(e.field), code: e.code, message: storable(e.message) })),
  }));
  await tx.query(
    `INSERT INTO batch_item_errors (tenant_id, batch_id, idx, external_id, sku, errors)
     SELECT $1, $2, x.idx, x.external_id, x.sku, x.errors
     FROM json_to_recordset($3::json) AS x(idx int, external_id text, sku text, errors jsonb)
     ON CONFLICT (tenant_id, batch_id, idx) DO NOTHING`,
    [batch.tenantId, batch.batchId, JSON.stringify(rows)],
  );
}

/** Indices at or above `fromIndex` that already have a failure record. */
export async function findFailedIndices(
  db: Queryable,
  batch: BatchKey & { fromIndex: number },
): Promise<Set<number>> {
  const rows = await db.query<{ idx: number }>(
    `SELECT idx FROM batch_item_errors WHERE tenant_id = $1 AND batch_id = $2 AND idx >= $3`,
    [batch.tenantId, batch.batchId, batch.fromIndex],
  );
  return new Set(rows.map((row) => row.idx));
}

/** Locks an unfinished batch's row until the transaction ends; null when missing or finished. */
export async function lockUnfinishedBatch(
  tx: Queryable,
  batch: BatchKey,
): Promise<{ status: BatchStatus; next_index: number; received_count: number } | null> {
  const rows = await tx.query<{ status: BatchStatus; next_index: number; received_count: number }>(
    `SELECT status, next_index, received_count FROM batches
     WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2 AND status IN ${UNFINISHED_SQL} FOR UPDATE`,
    [batch.tenantId, batch.batchId],
  );
  return rows[0] ?? null;
}

/**
 * Ends a batch that could not be processed: its `failedCount` unsettled items count as failed
 * (and as failed validation too when they were never validated), and the batch is `failed`
 * (docs/reference.md §5: "could not be processed after retries"), whatever it had written before. Its body
 * is dropped and its webhook deliveries recorded, as at every end.
 */
export async function giveUpBatch(
  tx: Queryable,
  batch: BatchKey & { failedCount: number; unvalidated: boolean },
  onEnd: OnBatchEnd,
): Promise<BatchStatus | null> {
  const rows = await tx.query<{ status: BatchStatus }>(
    `WITH ended AS (
       UPDATE batches SET
         failed = failed + $3,
         validated_failed = validated_failed + CASE WHEN $4 THEN $3 ELSE 0 END,
         next_index = received_count,
         status = CASE WHEN $3 > 0 THEN ${STATUS_SQL.failed} ELSE ${SETTLED_STATUS_SQL} END,
         ${TOUCH}
       WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2 AND status IN ${UNFINISHED_SQL}
       RETURNING status
     ), dropped AS (${dropBody('ended')}), outbox AS (${onEnd('ended')})
     SELECT status FROM ended`,
    [batch.tenantId, batch.batchId, batch.failedCount, batch.unvalidated],
  );
  return rows[0]?.status ?? null;
}
