import { queryRow, type Queryable } from '../db/database.ts';
import type { WebhookEvent } from './webhook-events.ts';
import type { EndpointRecord } from './webhook.schemas.ts';

/** SQL of webhook endpoints: a tenant's registrations and their secrets. */

interface RawEndpointRow extends Omit<EndpointRecord, 'created_at'> {
  created_at: Date;
}

const ENDPOINT_COLUMNS = 'id::text AS id, url, events, description, enabled, created_at';

const toRecord = (row: RawEndpointRow): EndpointRecord => ({
  ...row,
  created_at: row.created_at.toISOString(),
});

/**
 * Stores a new endpoint unless the tenant has `max` already; null when it has. The tenant's
 * endpoints are counted under a transaction lock of its own, so two concurrent creations cannot
 * both take the last place.
 */
export async function insertEndpoint(
  tx: Queryable,
  endpoint: {
    tenantId: string;
    id: string;
    url: string;
    events: readonly WebhookEvent[];
    description: string | null;
    secret: string;
    max: number;
  },
): Promise<EndpointRecord | null> {
  await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('webhook-endpoints:' || $1, 0))`, [
    endpoint.tenantId,
  ]);
  return queryRow(
    tx,
    `INSERT INTO webhook_endpoints (tenant_id, id, url, events, description, secret, created_at)
     SELECT $1, $2, $3, $4, $5, $6, date_trunc('milliseconds', now())
     WHERE (SELECT count(*) FROM webhook_endpoints WHERE tenant_id = $1) < $7
     RETURNING ${ENDPOINT_COLUMNS}`,
    [
      endpoint.tenantId,
      endpoint.id,
      endpoint.url,
      endpoint.events,
      endpoint.description,
      endpoint.secret,
      endpoint.max,
    ],
    toRecord,
  );
}

/** Where a page of the endpoint list starts: after the endpoint created at `createdAt` with `id`. */
export interface EndpointListPosition {
  createdAt: string;
  id: string;
}

/** A tenant's endpoints, oldest first (creation time, then id), after `after` (exclusive). */
export async function listEndpoints(
  db: Queryable,
  query: { tenantId: string; after: EndpointListPosition | null; limit: number },
): Promise<EndpointRecord[]> {
  const rows = await db.query<RawEndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
     WHERE tenant_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) > ($2::timestamptz, $3::uuid))
     ORDER BY created_at, id LIMIT $4`,
    [query.tenantId, query.after?.createdAt ?? null, query.after?.id ?? null, query.limit],
  );
  return rows.map(toRecord);
}

/** One endpoint of the tenant, or null. */
export async function findEndpoint(
  db: Queryable,
  tenantId: string,
  id: string,
): Promise<EndpointRecord | null> {
  return queryRow(
    db,
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2`,
    [tenantId, id],
    toRecord,
  );
}

/** Deletes an endpoint and, with it, its delivery log; false when there was none. */
export async function deleteEndpoint(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM webhook_endpoints WHERE tenant_id = $1 AND id = $2 RETURNING 1`, [
    tenantId,
    id,
  ]);
  return rows.length === 1;
}

/**
 * Makes `secret` the endpoint's secret; the one it replaces keeps signing for `overlapSeconds`.
 * False when there is no such endpoint.
 */
export async function rotateSecret(
  db: Queryable,
  rotation: { tenantId: string; id: string; secret: string; overlapSeconds: number },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE webhook_endpoints SET previous_secret = secret, secret = $3,
            previous_secret_expires_at = now() + make_interval(secs => $4)
     WHERE tenant_id = $1 AND id = $2 RETURNING 1`,
    [rotation.tenantId, rotation.id, rotation.secret, rotation.overlapSeconds],
  );
  return rows.length === 1;
}
