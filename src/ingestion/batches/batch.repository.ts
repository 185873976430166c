import { queryRow, type Queryable } from '../../db/database.ts';
import { HIDDEN_TENANT } from '../../db/hidden-tenant.ts';
import type { ItemFailure } from '../../validation/item-errors.ts';
import { UNFINISHED_SQL, type BatchStatus } from '../batch-status.ts';
import type { BatchRecord } from '../ingestion.schemas.ts';

/**
 * SQL of the `batches` table, API side: storing submissions and reading batches back. The worker's
 * writes are in batch-progress.repository.ts, retention in batch-retention.repository.ts; nothing
 * else in src/ names the table.
 */

/** A batch row, with what the worker also needs besides the public record. */
export interface BatchRow extends Omit<BatchRecord, 'label'> {
  tenant_id: string;
  /** The batch's label (docs/reference.md §11.1), null when it has none. */
  label: string | null;
  seq: number;
  next_index: number;
  /** Runs of the worker counted since the batch last made progress (see `countBatchAttempt`). */
  attempts: number;
}

/** A batch row as the driver returns it, timestamps still `Date`s. */
export interface RawBatchRow extends Omit<BatchRow, 'created_at' | 'updated_at'> {
  created_at: Date;
  updated_at: Date;
}

/** The columns of a {@link BatchRow}, for `SELECT` and `RETURNING`. */
export const BATCH_COLUMNS = `tenant_id, id::text AS batch_id, seq, status, received_count, validated_ok,
  validated_failed, upserted, failed, next_index, attempts, created_at, updated_at, label`;

/** Timestamps as the API shows them: ISO 8601, UTC, milliseconds. */
export function toBatchRow(row: RawBatchRow): BatchRow {
  return { ...row, created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString() };
}

/**
 * The public status record of a batch row: the nine fields of the spec, and `label` only when the
 * batch has one (docs/reference.md §11.1), as the status read, the list and webhook payloads all show it.
 */
export function toBatchRecord(row: BatchRow): BatchRecord {
  const record: BatchRecord = {
    batch_id: row.batch_id,
    status: row.status,
    received_count: row.received_count,
    created_at: row.created_at,
    validated_ok: row.validated_ok,
    validated_failed: row.validated_failed,
    upserted: row.upserted,
    failed: row.failed,
    updated_at: row.updated_at,
  };
  if (row.label !== null) record.label = row.label;
  return record;
}

/** Stores a new batch; its timestamps come from the database's clock, like every later change. */
export async function insertBatch(
  tx: Queryable,
  batch: { tenantId: string; batchId: string; receivedCount: number; label?: string | null },
): Promise<void> {
  await tx.query(
    `INSERT INTO batches (tenant_id, id, received_count, label, created_at, updated_at)
     VALUES ($1, $2, $3, $4, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()))`,
    [batch.tenantId, batch.batchId, batch.receivedCount, batch.label ?? null],
  );
}

/**
 * Stores every item of a submission: the body's JSON text, as received, in one row. Nothing is
 * re-serialized, numbers stay exactly as sent, and no item is judged before the worker does. Bytes
 * (UTF-8) go to the database as they are, without becoming a JavaScript string first.
 */
export async function insertBatchItems(
  tx: Queryable,
  items: { tenantId: string; batchId: string; body: string | Uint8Array },
): Promise<void> {
  await tx.query(`INSERT INTO batch_payloads (tenant_id, batch_id, body) VALUES ($1, $2, $3)`, [
    items.tenantId,
    items.batchId,
    items.body,
  ]);
}

/**
 * The tenant's batch with this id, or null (another tenant's batch is not found either). The tenant
 * is {@link HIDDEN_TENANT}: a tenant newer than the last ANALYZE still takes the primary key.
 */
export async function findBatch(db: Queryable, tenantId: string, batchId: string): Promise<BatchRow | null> {
  return queryRow(
    db,
    `SELECT ${BATCH_COLUMNS} FROM batches WHERE tenant_id = ${HIDDEN_TENANT} AND id = $2`,
    [tenantId, batchId],
    toBatchRow,
  );
}

/** One batch of one tenant: ids are unique per tenant only, so every statement is keyed by both. */
export interface BatchKey {
  tenantId: string;
  batchId: string;
}

/**
 * The batches of `keys` in one statement, each or null where no such batch is (another tenant's
 * included), in the order of `keys`. Every key is one primary-key probe (`LATERAL`), so the plan
 * stays an index look-up per key however many batches are stored.
 */
export async function findBatches(db: Queryable, keys: readonly BatchKey[]): Promise<Array<BatchRow | null>> {
  const rows = await db.query<RawBatchRow & { n: number }>(
    `SELECT k.n::int AS n, b.*
     FROM unnest($1::text[], $2::uuid[]) WITH ORDINALITY AS k (tenant_id, id, n)
     CROSS JOIN LATERAL (
       SELECT ${BATCH_COLUMNS} FROM batches WHERE batches.tenant_id = k.tenant_id AND batches.id = k.id
     ) AS b`,
    [keys.map((key) => key.tenantId), keys.map((key) => key.batchId)],
  );
  const found = new Array<BatchRow | null>(keys.length).fill(null);
  for (const { n, ...row } of rows) found[n - 1] = toBatchRow(row);
  return found;
}

/** Where a page of the batch list starts: after the batch submitted at `createdAt` with `batchId`. */
export interface BatchListPosition {
  createdAt: string;
  batchId: string;
}

/** `text` as a LIKE pattern that matches itself only: `\`, `%` and `_` escaped (`\` is LIKE's escape). */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, '\\$&');

/**
 * A tenant's batches, newest first (submission time, then id), after `before` (exclusive); with
 * `labelPrefix`, those whose label starts with it. The prefix is a LIKE pattern with a literal start
 * (`abc%`), which the planner turns into a range scan of `batches_by_tenant_label` ("C" collation).
 */
export async function listBatches(
  db: Queryable,
  query: {
    tenantId: string;
    before: BatchListPosition | null;
    limit: number;
    status: BatchStatus | null;
    labelPrefix: string | null;
  },
): Promise<BatchRow[]> {
  // Written in only when asked for: `($6 IS NULL OR label LIKE $6)` would hide the prefix from the planner.
  const filter = query.labelPrefix === null ? '' : 'AND label LIKE $6';
  const rows = await db.query<RawBatchRow>(
    `SELECT ${BATCH_COLUMNS} FROM batches
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
       AND ($4::text IS NULL OR status = $4) ${filter}
     ORDER BY created_at DESC, id DESC LIMIT $5`,
    [
      query.tenantId,
      query.before?.createdAt ?? null,
      query.before?.batchId ?? null,
      query.status,
      query.limit,
      ...(query.labelPrefix === null ? [] : [`${likeLiteral(query.labelPrefix)}%`]),
    ],
  );
  return rows.map(toBatchRow);
}

/** Failed items of a batch with an index in (afterIndex, beforeIndex), ascending. */
export async function listItemErrors(
  db: Queryable,
  query: { tenantId: string; batchId: string; afterIndex: number; beforeIndex: number; limit: number },
): Promise<ItemFailure[]> {
  return db.query<ItemFailure>(
    `SELECT idx AS index, errors, external_id, sku FROM batch_item_errors
     WHERE tenant_id = $1 AND batch_id = $2 AND idx > $3 AND idx < $4
     ORDER BY idx LIMIT $5`,
    [query.tenantId, query.batchId, query.afterIndex, query.beforeIndex, query.limit],
  );
}

/**
 * The tenant `$1`'s backlog, as a scalar subquery: items of its unfinished batches not settled yet
 * (the admission check of rate-limiter.ts reads it in its own statements).
 */
export const PENDING_ITEMS_SQL = `(SELECT COALESCE(sum(received_count - upserted - failed), 0)::int FROM batches
   WHERE tenant_id = $1 AND status IN ${UNFINISHED_SQL})`;
