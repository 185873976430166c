import type { Queryable } from '../db/database.ts';
import { RateLimitedError } from '../http/errors.ts';
import { UNFINISHED_SQL } from './batch-status.ts';

/** A submission let in before its body is read: its headers, and the check of its size. */
export interface Admission {
  /** The RateLimit-* headers to send with the answer. */
  headers: Record<string, string>;
  /**
   * In the transaction that stores the batch, before it writes: waits for the tenant's other
   * submissions to commit, counts the backlog again and throws 429 when `items` more would take a
   * non-empty backlog past the limit (an empty backlog takes a batch of any size, so a limit below
   * the batch size never locks a tenant out). Concurrent submissions cannot pass it together.
   */
  reserve(tx: Queryable, items: number): Promise<void>;
}

/** Per-tenant submission limits, kept in PostgreSQL so every API process shares them. */
export interface RateLimiter {
  /** Counts one submission of `tenantId`; throws 429 when over a limit already. */
  admit(tenantId: string): Promise<Admission>;
}

/** Deletes rate-limit windows that can no longer matter (the worker's sweep calls it). */
export async function pruneRateLimitWindows(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM rate_limit_windows WHERE window_start < now() - interval '10 minutes'`);
}

const WINDOW_SECONDS = 60;

/** The tenant `$1`'s backlog: items of its unfinished batches not settled yet. */
const PENDING_ITEMS = `(SELECT COALESCE(sum(received_count - upserted - failed), 0)::int FROM batches
   WHERE tenant_id = $1 AND status IN ${UNFINISHED_SQL})`;
const BACKLOG_RETRY_SECONDS = 5;

/**
 * Fixed one-minute windows: one upsert per submission counts it and returns the window's total;
 * the same statement reads the tenant's backlog (items of unfinished batches not yet settled), so
 * admission is a single round trip.
 */
export function createRateLimiter(
  db: Queryable,
  limits: { perMinute: number; maxPendingItems: number },
): RateLimiter {
  return {
    async admit(tenantId) {
      const rows = await db.query<{ hits: number; reset: number; pending: number }>(
        `WITH w AS (
           INSERT INTO rate_limit_windows (tenant_id, window_start, hits)
           VALUES ($1, date_trunc('minute', now()), 1)
           ON CONFLICT (tenant_id, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
           RETURNING hits, window_start
         )
         SELECT w.hits,
                GREATEST(1, ceil(extract(epoch FROM w.window_start + interval '${WINDOW_SECONDS} seconds' - now())))::int AS reset,
                ${PENDING_ITEMS} AS pending
         FROM w`,
        [tenantId],
      );
      const { hits, reset, pending } = rows[0] ?? { hits: 1, reset: WINDOW_SECONDS, pending: 0 };
      const headers = {
        'ratelimit-limit': String(limits.perMinute),
        'ratelimit-remaining': String(Math.max(0, limits.perMinute - hits)),
        'ratelimit-reset': String(reset),
      };
      if (hits > limits.perMinute) {
        throw new RateLimitedError(
          `At most ${limits.perMinute} submissions per minute per tenant; retry in ${reset} s.`,
          { ...headers, 'retry-after': String(reset) },
        );
      }
      // The backlog drains at the worker's pace; a short wait is the honest hint.
      const backlogFull = (message: string) =>
        new RateLimitedError(message, { ...headers, 'retry-after': String(BACKLOG_RETRY_SECONDS) });
      if (pending >= limits.maxPendingItems) {
        throw backlogFull(
          `Your tenant has ${pending} items waiting to be processed (limit ${limits.maxPendingItems}); retry shortly.`,
        );
      }
      return {
        headers,
        async reserve(tx, items) {
          await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('backlog:' || $1, 0))`, [tenantId]);
          const [row] = await tx.query<{ pending: number }>(`SELECT ${PENDING_ITEMS} AS pending`, [tenantId]);
          const now = row?.pending ?? 0;
          if (now > 0 && now + items > limits.maxPendingItems) {
            throw backlogFull(
              `Your tenant has ${now} items waiting to be processed; ${items} more would pass the limit of ${limits.maxPendingItems}. Retry shortly.`,
            );
          }
        },
      };
    },
  };
}
