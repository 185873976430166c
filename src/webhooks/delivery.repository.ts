import type { Queryable } from '../db/database.ts';
import { HIDDEN_ENDPOINT, HIDDEN_TENANT } from '../db/hidden-tenant.ts';
import { deletionInRuns, type RetentionDeletion } from '../db/deletion-in-runs.ts';
import { DELIVERY_STATUS, eventOfStatusSql, type WebhookEvent } from './webhook-events.ts';
import type { DeliveryRecord } from './webhook.schemas.ts';

/** SQL of webhook deliveries: the outbox, the dispatcher's claims and results, and the delivery log. */

/**
 * The outbox insert, as a statement for a CTE of the statement that ends a batch: one pending
 * delivery per enabled endpoint of the tenant subscribed to the event, recorded in the very
 * statement that makes the batch terminal, so the two commit together or not at all. `ended` names
 * a CTE that returns the ended batch's `status` (no row when the statement ended nothing); `$1` and
 * `$2` must be the tenant and the batch id, as in every statement that ends a batch.
 */
export const recordDeliveriesSql = (ended: string) =>
  `INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event, batch_id)
   SELECT e.tenant_id, gen_random_uuid(), e.id, ${eventOfStatusSql(`${ended}.status`)}, $2
   FROM ${ended} JOIN webhook_endpoints e
     ON e.tenant_id = $1 AND e.enabled AND ${eventOfStatusSql(`${ended}.status`)} = ANY (e.events)`;

interface RawDeliveryRow extends Omit<
  DeliveryRecord,
  'next_attempt_at' | 'created_at' | 'delivered_at' | 'batch_label'
> {
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  /** The batch's label; null when it has none, or the batch is gone (retention). */
  batch_label: string | null;
}

/** A delivery's columns (`d`) and its batch's label (`b`, joined on the tenant and the batch id). */
const DELIVERY_COLUMNS = `d.id::text AS id, d.event, d.batch_id::text AS batch_id, d.status, d.attempts,
  d.last_status_code, d.last_error, CASE WHEN d.status = 'pending' THEN d.next_attempt_at END AS next_attempt_at,
  d.created_at, d.delivered_at, b.label AS batch_label`;

const iso = (date: Date | null) => (date === null ? null : date.toISOString());
/** A log entry: `batch_label` only when the batch has a label, as a batch's own record has `label`. */
const toRecord = ({ batch_label, ...row }: RawDeliveryRow): DeliveryRecord => ({
  ...row,
  next_attempt_at: iso(row.next_attempt_at),
  created_at: row.created_at.toISOString(),
  delivered_at: iso(row.delivered_at),
  ...(batch_label === null ? {} : { batch_label }),
});

/** Where a page of a delivery log starts: after the delivery created at `createdAt` with `id`. */
export interface DeliveryListPosition {
  createdAt: string;
  id: string;
}

/** An endpoint's deliveries, newest first (creation time, then id), after `before` (exclusive). */
export async function listDeliveries(
  db: Queryable,
  query: { tenantId: string; endpointId: string; before: DeliveryListPosition | null; limit: number },
): Promise<DeliveryRecord[]> {
  const rows = await db.query<RawDeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
     LEFT JOIN batches b ON b.tenant_id = d.tenant_id AND b.id = d.batch_id
     WHERE d.tenant_id = $1 AND d.endpoint_id = $2
       AND ($3::timestamptz IS NULL OR (d.created_at, d.id) < ($3::timestamptz, $4::uuid))
     ORDER BY d.created_at DESC, d.id DESC LIMIT $5`,
    [
      query.tenantId,
      query.endpointId,
      query.before?.createdAt ?? null,
      query.before?.id ?? null,
      query.limit,
    ],
  );
  return rows.map(toRecord);
}

/**
 * Makes a delivery of the endpoint due now. One that had ended (delivered or failed) gets exactly
 * one more attempt; a pending one keeps its schedule and is only brought forward. False when the
 * endpoint has no such delivery.
 */
export async function scheduleRedelivery(
  db: Queryable,
  key: { tenantId: string; endpointId: string; deliveryId: string },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_deliveries
     SET final_attempt = final_attempt OR status <> '${DELIVERY_STATUS.pending}',
         status = '${DELIVERY_STATUS.pending}', next_attempt_at = now()
     WHERE tenant_id = ${HIDDEN_TENANT} AND endpoint_id = ${HIDDEN_ENDPOINT} AND id = $3 RETURNING 1`,
    [key.tenantId, key.endpointId, key.deliveryId],
  );
  return rows.length === 1;
}

/** Whether the endpoint has this delivery (of this tenant). */
export async function hasDelivery(
  db: Queryable,
  key: { tenantId: string; endpointId: string; deliveryId: string },
): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 FROM webhook_deliveries
     WHERE tenant_id = ${HIDDEN_TENANT} AND endpoint_id = ${HIDDEN_ENDPOINT} AND id = $3`,
    [key.tenantId, key.endpointId, key.deliveryId],
  );
  return rows.length === 1;
}

/** A pending delivery whose attempt is due and not claimed, or whose claim lapsed. */
export interface DueDelivery {
  tenantId: string;
  deliveryId: string;
}

/** A claim not settled within this time is taken for one whose process died: it may be claimed again. */
const claimLapsed = (column: string, seconds: number) =>
  `(${column} IS NULL OR ${column} < now() - make_interval(secs => ${Math.trunc(seconds)}))`;

/** Pending deliveries due now and not being attempted, soonest first, at most `limit`. */
export async function findDueDeliveries(
  db: Queryable,
  { limit, claimLapseSeconds }: { limit: number; claimLapseSeconds: number },
): Promise<DueDelivery[]> {
  return db.query<DueDelivery>(
    `SELECT tenant_id AS "tenantId", id::text AS "deliveryId" FROM webhook_deliveries
     WHERE status = '${DELIVERY_STATUS.pending}' AND next_attempt_at <= now()
       AND ${claimLapsed('attempt_started_at', claimLapseSeconds)}
     ORDER BY next_attempt_at LIMIT $1`,
    [limit],
  );
}

/** Seconds since the oldest pending delivery was recorded; 0 when none is pending. */
export async function oldestPendingAgeSeconds(db: Queryable): Promise<number> {
  const rows = await db.query<{ age: number | null }>(
    `SELECT EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS age FROM webhook_deliveries
     WHERE status = '${DELIVERY_STATUS.pending}'`,
  );
  return Math.max(0, rows[0]?.age ?? 0);
}

/**
 * 'pending' as a subquery's value, for the statements on one delivery by its primary key (tenant
 * hidden, src/db/hidden-tenant.ts): the planner cannot prove from it the predicate of the partial
 * index `webhook_deliveries_due`, so it cannot take that index to filter every due delivery of every
 * tenant, as it did with the tenant hidden and `'pending'` written out.
 */
const PENDING_UNSEEN = `(SELECT '${DELIVERY_STATUS.pending}'::text)`;

/** What an attempt needs: the delivery, its endpoint's address and the secrets that sign now. */
export interface ClaimedDelivery {
  id: string;
  tenantId: string;
  batchId: string;
  event: WebhookEvent;
  endpointId: string;
  url: string;
  enabled: boolean;
  secrets: string[];
  attempts: number;
  finalAttempt: boolean;
  payload: string | null;
  /** The claim's mark: only a result recorded with it settles the attempt. */
  claimedAt: Date;
}

/**
 * Claims a due delivery for one attempt; null when it is not pending, not due, or being attempted
 * by a live claim (another job got it first).
 */
export async function claimDelivery(
  db: Queryable,
  key: DueDelivery & { claimLapseSeconds: number },
): Promise<ClaimedDelivery | null> {
  const rows = await db.query<ClaimedDelivery>(
    `UPDATE webhook_deliveries d SET attempt_started_at = date_trunc('milliseconds', clock_timestamp())
     FROM webhook_endpoints e
     WHERE d.tenant_id = ${HIDDEN_TENANT} AND d.id = $2 AND e.tenant_id = d.tenant_id AND e.id = d.endpoint_id
       AND d.status = ${PENDING_UNSEEN} AND d.next_attempt_at <= now()
       AND ${claimLapsed('d.attempt_started_at', key.claimLapseSeconds)}
     RETURNING d.id::text AS id, d.tenant_id AS "tenantId", d.batch_id::text AS "batchId", d.event,
       d.endpoint_id::text AS "endpointId", e.url, e.enabled, d.attempts, d.final_attempt AS "finalAttempt",
       d.payload, d.attempt_started_at AS "claimedAt",
       CASE WHEN e.previous_secret_expires_at > now() THEN ARRAY[e.secret, e.previous_secret]
            ELSE ARRAY[e.secret] END AS secrets`,
    [key.tenantId, key.deliveryId],
  );
  return rows[0] ?? null;
}

/** How an attempt ended, as recorded on its delivery. */
export type AttemptResult =
  | { outcome: 'delivered'; statusCode: number }
  | {
      outcome: 'retry';
      statusCode: number | null;
      error: string;
      delaySeconds: number;
      /** Recorded instead of `error` when the endpoint was disabled meanwhile: the retry is not made. */
      errorIfDisabled: string;
    }
  | { outcome: 'failed'; statusCode: number | null; error: string };

/**
 * Records an attempt's result under its claim (a claim that lapsed and was taken again records
 * nothing); `payload` is kept as the body every later attempt sends. A result that asks for a retry
 * ends the delivery as failed instead when its endpoint was disabled meanwhile (another delivery's
 * attempt heard 410 Gone while this one was in flight). True when it was recorded.
 */
export async function recordAttempt(
  db: Queryable,
  claim: ClaimedDelivery,
  result: AttemptResult,
  payload: string | null,
): Promise<boolean> {
  const status =
    result.outcome === 'delivered'
      ? DELIVERY_STATUS.delivered
      : result.outcome === 'retry'
        ? DELIVERY_STATUS.pending
        : DELIVERY_STATUS.failed;
  const retry = `$4::text = '${DELIVERY_STATUS.pending}'`;
  const rows = await db.query(
    `UPDATE webhook_deliveries d SET
       status = CASE WHEN ${retry} AND NOT e.enabled THEN '${DELIVERY_STATUS.failed}' ELSE $4::text END,
       attempts = d.attempts + 1, last_status_code = $5,
       last_error = CASE WHEN ${retry} AND NOT e.enabled THEN $9::text ELSE $6::text END,
       next_attempt_at = CASE WHEN ${retry} AND e.enabled
         THEN date_trunc('milliseconds', clock_timestamp() + make_interval(secs => $7)) END,
       delivered_at = CASE WHEN $4::text = '${DELIVERY_STATUS.delivered}'
         THEN date_trunc('milliseconds', clock_timestamp()) ELSE d.delivered_at END,
       final_attempt = false, attempt_started_at = NULL, payload = COALESCE(d.payload, $8)
     FROM webhook_endpoints e
     WHERE d.tenant_id = ${HIDDEN_TENANT} AND d.id = $2 AND e.tenant_id = d.tenant_id AND e.id = d.endpoint_id
       AND d.attempt_started_at = $3 AND d.status = ${PENDING_UNSEEN}
     RETURNING 1`,
    [
      claim.tenantId,
      claim.id,
      claim.claimedAt,
      status,
      result.statusCode,
      result.outcome === 'delivered' ? null : result.error,
      result.outcome === 'retry' ? result.delaySeconds : 0,
      payload,
      result.outcome === 'retry' ? result.errorIfDisabled : null,
    ],
  );
  return rows.length === 1;
}

/**
 * Disables an endpoint whose URL answered 410 Gone and ends its pending deliveries as failed, in one
 * transaction with the result of the attempt that heard it. A delivery being attempted under a live
 * claim is left to record what its own attempt heard (recordAttempt ends it if that was a retry).
 */
export async function disableEndpoint(
  tx: Queryable,
  endpoint: {
    tenantId: string;
    endpointId: string;
    claimLapseSeconds: number;
    /** `last_error` of a delivery never attempted, and of one attempted before. */
    notSent: string;
    notRetried: string;
  },
): Promise<void> {
  await tx.query(`UPDATE webhook_endpoints SET enabled = false WHERE tenant_id = $1 AND id = $2`, [
    endpoint.tenantId,
    endpoint.endpointId,
  ]);
  await tx.query(
    `UPDATE webhook_deliveries SET status = '${DELIVERY_STATUS.failed}',
            last_error = CASE WHEN attempts = 0 THEN $3::text ELSE $4::text END,
            next_attempt_at = NULL, final_attempt = false, attempt_started_at = NULL
     WHERE tenant_id = $1 AND endpoint_id = $2 AND status = '${DELIVERY_STATUS.pending}'
       AND ${claimLapsed('attempt_started_at', endpoint.claimLapseSeconds)}`,
    [endpoint.tenantId, endpoint.endpointId, endpoint.notSent, endpoint.notRetried],
  );
}

/** Deliveries deleted per statement (each holds its payload, a few hundred bytes). */
const DELIVERIES_PER_STATEMENT = 1000;

/**
 * Deletes delivered and failed deliveries created more than `retentionDays` ago, oldest first, as the
 * worker's retention deletes batches (BATCH_RETENTION_DAYS); a pending delivery is kept until it ends.
 * At most 20,000 per call, none once `signal` is aborted. Returns how many it deleted.
 */
export const deleteExpiredDeliveries: RetentionDeletion = deletionInRuns(
  // `status <> 'pending'` written out, as the partial index `webhook_deliveries_ended` says it.
  `DELETE FROM webhook_deliveries WHERE (tenant_id, id) IN (
     SELECT tenant_id, id FROM webhook_deliveries
     WHERE status <> '${DELIVERY_STATUS.pending}' AND created_at < now() - make_interval(days => $1)
     ORDER BY created_at LIMIT $2
     FOR UPDATE SKIP LOCKED)
   RETURNING id`,
  DELIVERIES_PER_STATEMENT,
);
