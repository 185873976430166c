import type { Queryable } from '../db/database.ts';
import type { AcceptedBatch } from './ingestion.schemas.ts';

/** SQL of submissions' Idempotency-Keys (docs/reference.md §10.2, migration 009). */

/** How long a key is remembered. */
export const IDEMPOTENCY_KEY_TTL = `interval '24 hours'`;

/** The first answer given with a key, and the hash of the body it was given for. */
export interface IdempotentAnswer {
  bodySha256: Buffer;
  response: AcceptedBatch;
}

/**
 * Takes `key` for the batch answered with `response`, in the transaction that stores the batch;
 * returns null when it was free (never used, or used more than 24 hours ago), else the answer it was
 * first given. A twin's transaction still open makes the insert wait for it to end: committed, its
 * row is the answer; rolled back, the key is free and taken here.
 */
export async function claimIdempotencyKey(
  tx: Queryable,
  claim: { tenantId: string; key: string; bodySha256: Buffer; response: IdempotentAnswer['response'] },
): Promise<IdempotentAnswer | null> {
  const taken = await tx.query(
    `INSERT INTO idempotency_keys AS k (tenant_id, key, body_sha256, response, created_at)
     VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (tenant_id, key) DO UPDATE
       SET body_sha256 = EXCLUDED.body_sha256, response = EXCLUDED.response, created_at = EXCLUDED.created_at
       WHERE k.created_at < now() - ${IDEMPOTENCY_KEY_TTL}
     RETURNING 1`,
    [claim.tenantId, claim.key, claim.bodySha256, JSON.stringify(claim.response)],
  );
  if (taken.length > 0) return null;
  const [first] = await tx.query<{ body_sha256: Uint8Array; response: IdempotentAnswer['response'] }>(
    `SELECT body_sha256, response FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`,
    [claim.tenantId, claim.key],
  );
  if (!first) throw new Error('an idempotency key neither inserted nor found');
  return { bodySha256: Buffer.from(first.body_sha256), response: first.response };
}

/** Deletes keys past their 24 hours (the worker's sweep calls it). */
export async function deleteExpiredIdempotencyKeys(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - ${IDEMPOTENCY_KEY_TTL}`);
}
