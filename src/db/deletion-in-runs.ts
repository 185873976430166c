import type { Queryable } from './database.ts';

/** Statements per call, so a first sweep over years of rows does not hold the worker up. */
const STATEMENTS_PER_CALL = 20;

/** A retention's deletion: how many rows older than `retentionDays` it deleted. */
export type RetentionDeletion = (
  db: Queryable,
  retentionDays: number,
  signal?: AbortSignal,
) => Promise<number>;

/**
 * A deletion that runs `statement` until it deletes fewer rows than `rowsPerStatement`, at most 20
 * times and never once `signal` is aborted. The statement takes `$1` (the retention in days) and `$2`
 * (`rowsPerStatement`) and returns one row per row deleted. Each run commits alone: a long deletion
 * holds no lock across runs, and a statement that locks its rows with `FOR UPDATE SKIP LOCKED` lets
 * several processes share the work.
 */
export function deletionInRuns(statement: string, rowsPerStatement: number): RetentionDeletion {
  return async (db, retentionDays, signal) => {
    let deleted = 0;
    for (let i = 0; i < STATEMENTS_PER_CALL && !signal?.aborted; i++) {
      const rows = await db.query(statement, [retentionDays, rowsPerStatement]);
      deleted += rows.length;
      if (rows.length < rowsPerStatement) break;
    }
    return deleted;
  };
}
