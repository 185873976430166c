import type { Queryable } from '../../db/database.ts';
import { deletionInRuns, type RetentionDeletion } from '../../db/deletion-in-runs.ts';
import { TERMINAL_SQL, UNFINISHED_SQL } from '../batch-status.ts';

/** SQL of the `batches` table for the worker's housekeeping: batches that lost their worker, retention. */

/** Batches deleted per statement: a batch takes up to 1000 error records with it. */
const BATCHES_PER_STATEMENT = 100;

/**
 * Deletes batches that ended more than `retentionDays` ago, oldest first, with their error records;
 * unfinished batches (even one a repair reopened with its end still set) and the catalog are never
 * touched. At most 2000 batches per call (the worker calls it every 30 s), and none once `signal`
 * is aborted. Returns how many it deleted.
 */
export const deleteExpiredBatches: RetentionDeletion = deletionInRuns(
  // Batches another process is deleting are skipped, not waited for.
  `DELETE FROM batches WHERE (tenant_id, id) IN (
     SELECT tenant_id, id FROM batches
     WHERE ended_at < now() - make_interval(days => $1)
       AND status IN ${TERMINAL_SQL}
     ORDER BY ended_at LIMIT $2
     FOR UPDATE SKIP LOCKED)
   RETURNING id`,
  BATCHES_PER_STATEMENT,
);

/** Tenants with an unfinished batch that nothing has touched for `staleSeconds`. */
export async function findTenantsWithStaleBatches(db: Queryable, staleSeconds: number): Promise<string[]> {
  const rows = await db.query<{ tenant_id: string }>(
    `SELECT DISTINCT tenant_id FROM batches
     WHERE status IN ${UNFINISHED_SQL} AND updated_at < now() - make_interval(secs => $1)`,
    [staleSeconds],
  );
  return rows.map((row) => row.tenant_id);
}
