import { createHash } from 'node:crypto';
import type { Queryable } from '../db/database.ts';
import { decodeCursor, encodeCursor, invalidCursor } from '../pagination/cursor.ts';
import type { Page } from '../pagination/page.ts';
import { searchProducts, type RankPosition, type SearchCriteria } from './catalog-search.repository.ts';
import type { ProductView } from './product-schema.ts';

/** A page of search results: a page of the list plus the exact number of matches (docs/reference.md §11.7). */
export interface SearchPage extends Page<ProductView> {
  total: number;
}

/** The criteria that make `GET /products` a search: `q` or any filter. */
export const SEARCH_CRITERIA = ['q', 'type', 'style', 'sub_type', 'color', 'min_price', 'max_price'] as const;

/** True when `query` holds `q` or a filter, so the answer is a search's (with `total`). */
export function isSearch(query: SearchCriteria): boolean {
  return SEARCH_CRITERIA.some((name) => query[name] !== undefined);
}

/**
 * A cursor belongs to one search: its scope carries a digest of the criteria, so a cursor replayed
 * with other criteria is a 400 rather than a position in a different ranking.
 */
function scopeOf(criteria: SearchCriteria): string {
  const key = JSON.stringify(
    [...SEARCH_CRITERIA, 'prefix'].map((name) => criteria[name as keyof SearchCriteria] ?? null),
  );
  return `products-search:${createHash('sha256').update(key).digest('base64url').slice(0, 16)}`;
}

function decodePosition(cursor: string, scope: string): RankPosition {
  const position = decodeCursor<string>(cursor, scope, 'string');
  const space = position.indexOf(' ');
  const rank = Number(position.slice(0, space));
  const externalId = position.slice(space + 1);
  if (space < 1 || !Number.isFinite(rank) || externalId === '') throw invalidCursor();
  return { rank, externalId };
}

/**
 * Searches the tenant's catalog: matches ranked most relevant first, pages walked with a keyset
 * cursor over (rank, external_id), which stays exact however the ranks tie (docs/search.md).
 */
export async function searchCatalog(
  db: Queryable,
  tenantId: string,
  criteria: SearchCriteria,
  page: { limit: number; cursor?: string },
): Promise<SearchPage> {
  const scope = scopeOf(criteria);
  const after = page.cursor === undefined ? null : decodePosition(page.cursor, scope);
  // PostgreSQL text cannot hold U+0000, so no stored word or id holds it.
  if (Object.values(criteria).some((value) => typeof value === 'string' && value.includes('\u0000'))) {
    return { data: [], next_cursor: null, total: 0 };
  }
  const found = await searchProducts(db, { tenantId, criteria, after, limit: page.limit + 1 });
  const rows = found.rows.slice(0, page.limit);
  const last = rows.at(-1);
  return {
    data: rows.map(({ rank: _rank, ...product }) => product),
    next_cursor:
      found.rows.length > page.limit && last ? encodeCursor(scope, `${last.rank} ${last.external_id}`) : null,
    total: found.total,
  };
}
