import type { Queryable } from '../db/database.ts';
import type { MergedImage, ProductRow, VariantRow } from './merge-items.ts';

/** The stored rows a body names: its products by external_id, its variants by sku (with their owners). */
export interface CatalogRows {
  products: Map<string, ProductRow>;
  variants: Map<string, VariantRow>;
}

type ProductTuple = [string, string, string, ProductRow['style'], ProductRow['type'], ProductRow['sub_type']];
type VariantTuple = [
  string,
  string,
  string,
  string,
  number,
  number,
  number,
  number,
  VariantRow['color'],
  number,
  string,
  MergedImage[],
];

/** Keys a body names from which its rows are read by two statements at once (a 1000-item body names ~4000). */
const SPLIT_FROM_KEYS = 1000;

/**
 * The catalog as it is stored now, for the whole of a body at once: the products among
 * `externalIds` and the variants among `skus` (whichever product owns them), every column as the
 * catalog reads show it. A preview compares a body's items with them (CONTRACT §10.3).
 *
 * For a large body, two statements at once, the products with the first part of the skus and the
 * rest of the skus alone: on a server they run on two connections, so two backends share the work
 * and the wait is about half the one statement's (docs/performance.md, preview); the embedded
 * database runs them one after the other in the time one took.
 */
export async function findCatalogRows(
  db: Queryable,
  tenantId: string,
  keys: { externalIds: readonly string[]; skus: readonly string[] },
): Promise<CatalogRows> {
  // The products cost about as much as 700 variants: the split gives each statement a like share. A
  // small body is read by one statement: a second connection would cost more than it saves.
  const keyCount = keys.externalIds.length + keys.skus.length;
  const split =
    keyCount < SPLIT_FROM_KEYS
      ? 0
      : Math.max(0, Math.ceil((keys.skus.length - keys.externalIds.length * 0.7) / 2));
  const [first, rest] = await Promise.all([
    readCatalogRows(db, tenantId, keys.externalIds, keys.skus.slice(0, keys.skus.length - split)),
    split > 0 ? readCatalogRows(db, tenantId, [], keys.skus.slice(keys.skus.length - split)) : null,
  ]);
  const rows = toCatalogRows(first);
  if (rest) for (const [sku, row] of toCatalogRows(rest).variants) rows.variants.set(sku, row);
  return rows;
}

/** A statement's rows by key, each tuple turned into the row it stands for. */
function toCatalogRows([products, variants]: [ProductTuple[], VariantTuple[]]): CatalogRows {
  return {
    products: new Map(
      products.map(([external_id, name, description, style, type, sub_type]) => [
        external_id,
        { external_id, name, description, style, type, sub_type },
      ]),
    ),
    variants: new Map(
      variants.map(
        ([sku, external_id, name, item_url, depth, height, width, weight, color, price, brand, images]) => [
          sku,
          { sku, external_id, name, item_url, depth, height, width, weight, color, price, brand, images },
        ],
      ),
    ),
  };
}

/**
 * One statement, one primary-key probe per key (as `findVariantsBySku`, and for the same reason: with
 * `= ANY(…)` and stale statistics the planner may scan the tenant's whole index range), and the rows
 * come back as one JSON text of arrays, a row an array of its columns in a fixed order: turned into
 * JavaScript values once rather than column by column and row by row (twice as slow on the embedded
 * database for 3000 variants), and without the per-row column names of `json_agg` over records, which
 * cost PostgreSQL twice the time. Numbers are float8 written by PostgreSQL as the shortest text that
 * reads back as the same double: the values the worker stored.
 */
async function readCatalogRows(
  db: Queryable,
  tenantId: string,
  externalIds: readonly string[],
  skus: readonly string[],
): Promise<[ProductTuple[], VariantTuple[]]> {
  const [row] = await db.query<{ rows: string }>(
    `SELECT json_build_array(
       (SELECT COALESCE(json_agg(json_build_array(
                 x.external_id, x.name, x.description, x.style, x.type, x.sub_type)), '[]')
        FROM unnest($2::text[]) AS k(external_id)
        CROSS JOIN LATERAL (
          SELECT * FROM products WHERE tenant_id = $1 AND external_id = k.external_id LIMIT 1
        ) AS x),
       (SELECT COALESCE(json_agg(json_build_array(
                 x.sku, x.external_id, x.name, x.item_url, x.depth, x.height, x.width, x.weight,
                 x.color, x.price, x.brand, x.images)), '[]')
        FROM unnest($3::text[]) AS k(sku)
        CROSS JOIN LATERAL (SELECT * FROM variants WHERE tenant_id = $1 AND sku = k.sku LIMIT 1) AS x)
     )::text AS rows`,
    [tenantId, externalIds, skus],
  );
  return JSON.parse(row?.rows ?? '[[],[]]') as [ProductTuple[], VariantTuple[]];
}
