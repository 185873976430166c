import type { Queryable } from '../db/database.ts';
import { batchOrNotFound, createBatchedStatusReads } from './batched-status-reads.ts';
import { listItemErrors } from './batches/batch.repository.ts';
import type { ItemFailure } from '../validation/item-errors.ts';
import { summarizeItemErrors } from './error-reports.repository.ts';
import type { ErrorSummary } from './error-reports.schemas.ts';

/** Failed items read per statement while a batch's errors are streamed. */
export const ERROR_WALK_PAGE = 200;

/** A batch's errors as reports (docs/reference.md §10.4); knows nothing of HTTP or of CSV. */
export interface ErrorReports {
  /** The batch's errors summed up by code; 404 as for the batch itself. */
  summarize(tenantId: string, batchId: string): Promise<ErrorSummary>;
  /**
   * Every failed item of the batch, in index order, as pages read one statement at a time while the
   * caller consumes them, so a caller that writes each page out holds one page at most. Resolves
   * (or throws 404) before anything is read, so a reply can still become a problem.
   */
  walkErrors(tenantId: string, batchId: string): Promise<AsyncIterable<ItemFailure[]>>;
}

/**
 * Creates the error reports. Both read only items below the batch's `next_index` when asked, as the
 * errors page does: those are settled, and their records never change afterwards.
 */
export function createErrorReports({ db }: { db: Queryable }): ErrorReports {
  const readBatch = createBatchedStatusReads(db);
  return {
    async summarize(tenantId, batchId) {
      const batch = await batchOrNotFound(readBatch, tenantId, batchId);
      return summarizeItemErrors(db, { tenantId, batchId: batch.batch_id, beforeIndex: batch.next_index });
    },

    async walkErrors(tenantId, batchId) {
      const batch = await batchOrNotFound(readBatch, tenantId, batchId);
      const key = { tenantId, batchId: batch.batch_id, beforeIndex: batch.next_index };
      return (async function* () {
        let afterIndex = -1;
        for (;;) {
          const page = await listItemErrors(db, { ...key, afterIndex, limit: ERROR_WALK_PAGE });
          if (page.length > 0) yield page;
          if (page.length < ERROR_WALK_PAGE) return;
          afterIndex = page.at(-1)!.index;
        }
      })();
    },
  };
}
