import type { Queryable } from './database.ts';

/** Statements per call, so a first sweep over years of rows does not hold the worker up. */
const STATEMENTS_PER_CALL = 20;

/**
 * Runs a retention `statement` until it deletes fewer rows than `rowsPerStatement`, at most 20 times
 * and never once `signal` is aborted, and returns how many rows it deleted. The statement takes
 * `$1` (the retention in days) and `$2` (`rowsPerStatement`) and returns one row per row deleted.
 * Each run commits alone: a long deletion holds no lock across runs, and a statement that locks its
 * rows with `FOR UPDATE SKIP LOCKED` lets several processes share the work.
 */
export async function deleteInRuns(
  db: Queryable,
  statement: string,
  { retentionDays, rowsPerStatement }: { retentionDays: number; rowsPerStatement: number },
  signal?: AbortSignal,
): Promise<number> {
  let deleted = 0;
  for (let i = 0; i < STATEMENTS_PER_CALL && !signal?.aborted; i++) {
    const rows = await db.query(statement, [retentionDays, rowsPerStatement]);
    deleted += rows.length;
    if (rows.length < rowsPerStatement) break;
  }
  return deleted;
}
