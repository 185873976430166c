import type { Queryable } from '../db/database.ts';
import { RateLimitedError, type RateLimitQuota } from '../errors/app-errors.ts';
import { PENDING_ITEMS_SQL } from './batches/batch.repository.ts';

/** A submission let in before its body is read: its headers, and the check of its size. */
export interface Admission {
  /** The tenant's quota after this submission, which the answer reports. */
  quota: RateLimitQuota;
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
  /**
   * Counts one submission of `tenantId`; throws 429 when over a limit already. `backlog: false`
   * leaves the backlog out (a preview counts toward the rate but adds no items).
   */
  admit(tenantId: string, options?: { backlog?: boolean }): Promise<Admission>;
}

const WINDOW_SECONDS = 60;

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
    async admit(tenantId, { backlog = true } = {}) {
      const rows = await db.query<{ hits: number; reset: number; pending: number }>(
        `WITH w AS (
           INSERT INTO rate_limit_windows (tenant_id, window_start, hits)
           VALUES ($1, date_trunc('minute', now()), 1)
           ON CONFLICT (tenant_id, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1
           RETURNING hits, window_start
         )
         SELECT w.hits,
                GREATEST(1, ceil(extract(epoch FROM w.window_start + interval '${WINDOW_SECONDS} seconds' - now())))::int AS reset,
                ${PENDING_ITEMS_SQL} AS pending
         FROM w`,
        [tenantId],
      );
      const { hits, reset, pending } = rows[0] ?? { hits: 1, reset: WINDOW_SECONDS, pending: 0 };
      const quota = {
        limit: limits.perMinute,
        remaining: Math.max(0, limits.perMinute - hits),
        resetSeconds: reset,
      };
      if (hits > limits.perMinute) {
        throw new RateLimitedError(
          `At most ${limits.perMinute} submissions per minute per tenant; retry in ${reset} s.`,
          { retryAfterSeconds: reset, quota },
        );
      }
      // The backlog drains at the worker's pace; a short wait is the honest hint.
      const backlogFull = (message: string) =>
        new RateLimitedError(message, { retryAfterSeconds: BACKLOG_RETRY_SECONDS, quota });
      if (backlog && pending >= limits.maxPendingItems) {
        throw backlogFull(
          `Your tenant has ${pending} items waiting to be processed (limit ${limits.maxPendingItems}); retry shortly.`,
        );
      }
      return {
        quota,
        async reserve(tx, items) {
          await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('backlog:' || $1, 0))`, [tenantId]);
          const [row] = await tx.query<{ pending: number }>(`SELECT ${PENDING_ITEMS_SQL} AS pending`, [
            tenantId,
          ]);
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

/** Deletes rate-limit windows that can no longer matter (the API counts the current minute only). */
export async function pruneRateLimitWindows(db: Queryable): Promise<void> {
  await db.query(`DELETE FROM rate_limit_windows WHERE window_start < now() - interval '10 minutes'`);
}
