import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../../src/db/database.ts';

/**
 * Whether `count` (one statement returning `n`) comes back above 0 within `timeoutMs`, asked every
 * 20 ms: how a test knows that a transaction it holds open now blocks another.
 */
async function seenWithin(
  db: Queryable,
  count: string,
  params: readonly unknown[],
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [waiting] = await db.query<{ n: number }>(count, params);
    if ((waiting?.n ?? 0) > 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
}

/**
 * Whether a statement of another session waits for a lock that the session of backend `pid` holds:
 * unlike a match on the statement's text, it cannot be fooled by another test's session waiting on
 * its own locks.
 */
export function sessionWaitsOn(db: Queryable, pid: number, timeoutMs = 10_000): Promise<boolean> {
  return seenWithin(
    db,
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))',
    [pid],
    timeoutMs,
  );
}
