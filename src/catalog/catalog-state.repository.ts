import type { Database } from '../db/database.ts';
import type { MergedImage, ProductRow, VariantRow } from './merge-items.ts';

/** The stored rows a body names: its products by external_id, its variants by sku (with their owners). */
export interface CatalogRows {
  products: Map<string, ProductRow>;
  variants: Map<string, VariantRow>;
}

/**
 * The catalog as it is stored now, for the whole of a body at once: the products among
 * `externalIds` and the variants among `skus` (whichever product owns them), every column as the
 * catalog reads show it. A preview compares a body's items with them (CONTRACT §10.3).
 *
 * The same rows come back in the form each database hands over fastest (docs/performance.md,
 * preview): a server sends plain rows, which `pg` turns into objects faster than a server writes
 * them out as JSON text; PGlite turns plain rows into objects in this thread twice as slowly as it
 * parses one JSON text of them. Both forms probe the same keys and read the same columns, and the
 * preview tests run on both databases.
 */
export async function findCatalogRows(
  db: Pick<Database, 'query' | 'kind'>,
  tenantId: string,
  keys: { externalIds: readonly string[]; skus: readonly string[] },
): Promise<CatalogRows> {
  if (db.kind === 'embedded') return readAsJson(db, tenantId, keys);
  // Two statements at once: on a server they run on two connections.
  const [products, variants] = await Promise.all([
    db.query<ProductRow>(
      `SELECT x.external_id, x.name, x.description, x.style, x.type, x.sub_type
       FROM unnest($2::text[]) AS k(external_id)
       CROSS JOIN LATERAL (${PRODUCT_PROBE}) AS x`,
      [tenantId, keys.externalIds],
    ),
    db.query<VariantRow>(
      `SELECT x.sku, x.external_id, x.name, x.item_url, x.depth, x.height, x.width, x.weight,
              x.color, x.price, x.brand, x.images
       FROM unnest($2::text[]) AS k(sku)
       CROSS JOIN LATERAL (${VARIANT_PROBE}) AS x`,
      [tenantId, keys.skus],
    ),
  ]);
  return {
    products: new Map(products.map((row) => [row.external_id, row])),
    variants: new Map(variants.map((row) => [row.sku, row])),
  };
}

/**
 * One primary-key probe per key (as `findVariantsBySku`, and for the same reason: with `= ANY(…)`
 * and stale statistics the planner may scan the tenant's whole index range).
 */
const PRODUCT_PROBE = 'SELECT * FROM products WHERE tenant_id = $1 AND external_id = k.external_id LIMIT 1';
const VARIANT_PROBE = 'SELECT * FROM variants WHERE tenant_id = $1 AND sku = k.sku LIMIT 1';

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

/**
 * The embedded database's form: one statement whose rows come back as one JSON text of arrays, a
 * row an array of its columns in a fixed order (without the per-row column names of `json_agg` over
 * records, which cost PostgreSQL twice the time). Numbers are float8 written by PostgreSQL as the
 * shortest text that reads back as the same double: the values the worker stored.
 */
async function readAsJson(
  db: Pick<Database, 'query'>,
  tenantId: string,
  keys: { externalIds: readonly string[]; skus: readonly string[] },
): Promise<CatalogRows> {
  const [row] = await db.query<{ rows: string }>(
    `SELECT json_build_array(
       (SELECT COALESCE(json_agg(json_build_array(
                 x.external_id, x.name, x.description, x.style, x.type, x.sub_type)), '[]')
        FROM unnest($2::text[]) AS k(external_id)
        CROSS JOIN LATERAL (${PRODUCT_PROBE}) AS x),
       (SELECT COALESCE(json_agg(json_build_array(
                 x.sku, x.external_id, x.name, x.item_url, x.depth, x.height, x.width, x.weight,
                 x.color, x.price, x.brand, x.images)), '[]')
        FROM unnest($3::text[]) AS k(sku)
        CROSS JOIN LATERAL (${VARIANT_PROBE}) AS x)
     )::text AS rows`,
    [tenantId, keys.externalIds, keys.skus],
  );
  const [products, variants] = JSON.parse(row?.rows ?? '[[],[]]') as [ProductTuple[], VariantTuple[]];
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
