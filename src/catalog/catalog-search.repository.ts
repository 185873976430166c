import type { Queryable } from '../db/database.ts';
import { PRODUCT_VIEW_SELECT_LIST } from './catalog.repository.ts';
import type { ProductView } from './product-schema.ts';
import { colorSpellings } from './enums.ts';

/** SQL of the catalog search (docs/reference.md §11.7): migration 013's documents, matched and ranked. */

/** What a search selects; a field left undefined does not narrow it. */
export interface SearchCriteria {
  q?: string;
  type?: string;
  style?: string;
  sub_type?: string;
  color?: string;
  min_price?: number;
  max_price?: number;
  prefix?: string;
}

/** A keyset position in the ranked list: the last listed product's rank and external_id. */
export interface RankPosition {
  rank: number;
  externalId: string;
}

/** One page of matches, most relevant first, with the number of all matches. */
export interface SearchRows {
  total: number;
  rows: Array<ProductView & { rank: number }>;
}

// Weights of the document's parts (ts_rank takes them as {D, C, B, A}): keys, then name, then brand.
const WEIGHTS = `'{0.05, 0.2, 0.5, 1.0}'`;

/**
 * The tenant's products matching `criteria`, ordered by rank (highest first), then external_id,
 * after `after` (exclusive), at most `limit`; with `total`, the count of every match. The rank adds
 * the whole-word match to the prefix match, so "oak" ranks a product with the word "oak" before one
 * with only "oaken". Without `q` every rank is 0 and the order is by external_id.
 *
 * The variant filters are one EXISTS: one variant satisfies all of them; `color` matches each of
 * its spellings (`Gray` and `Grey`, `COLOR_SPELLINGS`). The matches are a
 * materialized CTE, read once for the count and once for the page.
 */
export async function searchProducts(
  db: Queryable,
  query: { tenantId: string; criteria: SearchCriteria; after: RankPosition | null; limit: number },
): Promise<SearchRows> {
  const { criteria: c, after } = query;
  const variantFilter = c.color !== undefined || c.min_price !== undefined || c.max_price !== undefined;
  const rows = await db.query<
    ProductView & { rank: number | null; total: number; external_id: string | null }
  >(
    `WITH terms AS (
       SELECT catalog_search_query($2::text, true) AS prefixed, catalog_search_query($2::text, false) AS whole
     ),
     matches AS MATERIALIZED (
       SELECT p.external_id,
              CASE WHEN t.prefixed IS NULL THEN 0
                   ELSE ts_rank(${WEIGHTS}, p.search, t.prefixed) + ts_rank(${WEIGHTS}, p.search, t.whole)
              END::real AS rank
       FROM products p CROSS JOIN terms t
       WHERE p.tenant_id = $1
         AND (t.prefixed IS NULL OR p.search @@ t.prefixed)
         AND ($3::text IS NULL OR p.type = $3)
         AND ($4::text IS NULL OR p.style = $4)
         AND ($5::text IS NULL OR p.sub_type = $5)
         AND ($11::text IS NULL OR starts_with(p.external_id, $11))
         ${
           variantFilter
             ? `AND EXISTS (
                  SELECT 1 FROM variants v
                  WHERE v.tenant_id = p.tenant_id AND v.external_id = p.external_id
                    AND ($6::text[] IS NULL OR v.color = ANY($6::text[]))
                    AND ($7::float8 IS NULL OR v.price >= $7)
                    AND ($8::float8 IS NULL OR v.price <= $8)
                )`
             : `AND $6::text[] IS NULL AND $7::float8 IS NULL AND $8::float8 IS NULL`
         }
     ),
     page AS (
       SELECT external_id, rank FROM matches
       WHERE $9::real IS NULL OR rank < $9 OR (rank = $9 AND external_id > $10::text)
       ORDER BY rank DESC, external_id
       LIMIT $12
     )
     SELECT c.total, r.*
     FROM (SELECT count(*)::int AS total FROM matches) AS c
     LEFT JOIN LATERAL (
       SELECT page.rank, ${PRODUCT_VIEW_SELECT_LIST}
       FROM page JOIN products p ON p.tenant_id = $1 AND p.external_id = page.external_id
     ) AS r ON true
     ORDER BY r.rank DESC, r.external_id`,
    [
      query.tenantId,
      c.q ?? null,
      c.type ?? null,
      c.style ?? null,
      c.sub_type ?? null,
      // Every spelling of the colour (enums.ts): `= ANY` of a short array, which an index on the
      // column could serve as it would `=`.
      c.color === undefined ? null : colorSpellings(c.color),
      c.min_price ?? null,
      c.max_price ?? null,
      after?.rank ?? null,
      after?.externalId ?? null,
      c.prefix ?? null,
      query.limit,
    ],
  );
  const total = rows[0]?.total ?? 0;
  const found = rows.filter((row) => row.external_id !== null && row.rank !== null);
  return {
    total,
    rows: found.map(({ total: _total, ...row }) => row as ProductView & { rank: number }),
  };
}
