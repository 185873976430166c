import type { Queryable } from '../db/database.ts';
import { SUMMARY_SAMPLES, type ErrorSummary } from './error-reports.schemas.ts';

/** SQL of the error reports (docs/reference.md §10.4): the grouped summary of a batch's item errors. */

/**
 * Sums up the item errors of a batch with an index below `beforeIndex`, in one statement: each
 * failed item's `errors` array is unnested and grouped by code. Codes come by error count, most
 * first, then by code; a code's fields by how many of its errors name them, most first, then by
 * field (byte order), at most {@link SUMMARY_SAMPLES}; its sample indices are the lowest item
 * indices that have it, at most as many.
 */
export async function summarizeItemErrors(
  db: Queryable,
  batch: { tenantId: string; batchId: string; beforeIndex: number },
): Promise<ErrorSummary> {
  const [row] = await db.query<ErrorSummary>(
    `WITH errs AS (
       SELECT f.idx, e.error ->> 'code' AS code, e.error ->> 'field' AS field
       FROM batch_item_errors f CROSS JOIN LATERAL jsonb_array_elements(f.errors) AS e(error)
       WHERE f.tenant_id = $1 AND f.batch_id = $2 AND f.idx < $3
     ), fields AS (
       SELECT code, field,
              row_number() OVER (PARTITION BY code ORDER BY count(*) DESC, field COLLATE "C") AS rank
       FROM errs GROUP BY code, field
     ), codes AS (
       SELECT code, count(*)::int AS count, (array_agg(DISTINCT idx ORDER BY idx))[1:$4] AS samples
       FROM errs GROUP BY code
     )
     SELECT (SELECT count(DISTINCT idx)::int FROM errs) AS failed_items,
            COALESCE(json_agg(json_build_object(
              'code', c.code,
              'count', c.count,
              'fields', (SELECT json_agg(f.field ORDER BY f.rank) FROM fields f
                         WHERE f.code = c.code AND f.rank <= $4),
              'sample_indices', to_json(c.samples)
            ) ORDER BY c.count DESC, c.code COLLATE "C"), '[]'::json) AS data
     FROM codes c`,
    [batch.tenantId, batch.batchId, batch.beforeIndex, SUMMARY_SAMPLES],
  );
  return row ?? { failed_items: 0, data: [] };
}
