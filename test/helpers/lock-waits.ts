import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../src/db/database.ts';

/**
 * Whether a statement of this database whose text matches `pattern` (`ILIKE`) is seen waiting for a
 * lock within `timeoutMs`: how a test knows that a transaction it holds open now blocks another.
 */
export async function statementWaitsForLock(
  db: Queryable,
  pattern: string,
  timeoutMs = 10_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [waiting] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE $1`,
      [pattern],
    );
    if ((waiting?.n ?? 0) > 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

/**
 * Whether a statement of another session is seen waiting for a lock that the session of backend
 * `pid` holds, within `timeoutMs`: unlike a match on the statement's text, it cannot be fooled by
 * another test's session waiting on its own locks.
 */
export async function sessionWaitsOn(db: Queryable, pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [waiting] = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))',
      [pid],
    );
    if ((waiting?.n ?? 0) > 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}
