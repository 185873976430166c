import type { Database } from '../db/database.ts';
import type { MergedImage, ProductRow, VariantRow } from './merge-items.ts';
import { VARIANT_PROBE } from './variant-probe.ts';

/** The stored rows a body names: its products by external_id, its variants by sku (with their owners). */
export interface CatalogRows {
  products: Map<string, ProductRow>;
  variants: Map<string, VariantRow>;
}

/**
 * The catalog as it is stored now, for the whole of a body at once: the products among
 * `externalIds` and the variants among `skus` (whichever product owns them), every column as the
 * catalog reads show it, from one statement, so from one snapshot: a delete committing meanwhile is
 * seen whole or not at all. A preview compares a body's items with them (docs/reference.md §10.3).
 *
 * The same rows come back in the form each database hands over fastest (docs/performance.md,
 * preview): a server sends plain rows, which `pg` turns into objects faster than a server writes
 * them out as JSON text; PGlite turns plain rows into objects in this thread twice as slowly as it
 * parses one JSON text of them. A test reads the same rows in both forms on each database.
 */
export function findCatalogRows(
  db: Pick<Database, 'query' | 'kind'>,
  tenantId: string,
  keys: CatalogKeys,
): Promise<CatalogRows> {
  return db.kind === 'embedded' ? readAsJson(db, tenantId, keys) : readAsRows(db, tenantId, keys);
}

/** The keys a body names. */
export interface CatalogKeys {
  externalIds: readonly string[];
  skus: readonly string[];
  /**
   * Also read the variants of these products whose sku equals a named sku once leading zeros are
   * dropped from both (the preview's warning, docs/spreadsheets.md#leading-zeros). Absent: none read.
   */
  lookalikesOf?: readonly string[];
}

/**
 * The stored variants of the products `$4` whose sku is not named (`$3`) but equals a named one once
 * leading zeros are dropped (`$5`, the named skus so trimmed): one range of `variants_by_product` per
 * product, and none when `$4` is empty, as it is for the worker.
 */
const LOOKALIKE_VARIANTS = `SELECT x.* FROM unnest($4::text[]) AS p(external_id)
     JOIN variants x ON x.tenant_id = $1 AND x.external_id = p.external_id
     WHERE ltrim(x.sku, '0') = ANY ($5::text[]) AND x.sku <> ALL ($3::text[])`;

/** The parameters of the catalog read: the tenant, the keys, and the lookalikes' products and trimmed skus. */
function readParameters(tenantId: string, keys: CatalogKeys): unknown[] {
  const lookalikesOf = keys.lookalikesOf ?? [];
  const trimmed = lookalikesOf.length === 0 ? [] : keys.skus.map((sku) => sku.replace(/^0+/, ''));
  return [tenantId, keys.externalIds, keys.skus, lookalikesOf, trimmed];
}

/**
 * One primary-key probe per key, as {@link VARIANT_PROBE} and for the same reason: with `= ANY(…)`
 * and stale statistics the planner may scan the tenant's whole index range. The primary key is
 * the only index of `products` whose first column is the tenant, so the plain `$1` is safe here.
 */
const PRODUCT_PROBE = 'SELECT * FROM products WHERE tenant_id = $1 AND external_id = k.external_id LIMIT 1';

/** A row of `readAsRows`: a product's columns (`sku` null) or a variant's. */
type ProductOrVariant = {
  sku: string | null;
  external_id: string;
  name: string;
} & Omit<ProductRow, 'external_id' | 'name'> &
  Omit<VariantRow, 'sku' | 'external_id' | 'name'>;

/**
 * The server's form: plain rows, the products and then the variants in one statement (so one
 * snapshot), each row with the columns of both, the other kind's null.
 */
export async function readAsRows(
  db: Pick<Database, 'query'>,
  tenantId: string,
  keys: CatalogKeys,
): Promise<CatalogRows> {
  const rows = await db.query<ProductOrVariant>(
    `SELECT NULL::text AS sku, x.external_id, x.name, x.description, x.style, x.type, x.sub_type,
            NULL::text AS item_url, NULL::float8 AS depth, NULL::float8 AS height, NULL::float8 AS width,
            NULL::float8 AS weight, NULL::text AS color, NULL::float8 AS price, NULL::text AS brand,
            NULL::jsonb AS images
     FROM unnest($2::text[]) AS k(external_id)
     CROSS JOIN LATERAL (${PRODUCT_PROBE}) AS x
     UNION ALL
     SELECT x.sku, x.external_id, x.name, NULL, NULL, NULL, NULL,
            x.item_url, x.depth, x.height, x.width, x.weight, x.color, x.price, x.brand, x.images
     FROM (SELECT x.* FROM unnest($3::text[]) AS k(sku) CROSS JOIN LATERAL (${VARIANT_PROBE}) AS x
           UNION ALL ${LOOKALIKE_VARIANTS}) AS x`,
    readParameters(tenantId, keys),
  );
  const catalog: CatalogRows = { products: new Map(), variants: new Map() };
  for (const row of rows) {
    const { sku, external_id, name } = row;
    if (sku === null) {
      const { description, style, type, sub_type } = row;
      catalog.products.set(external_id, { external_id, name, description, style, type, sub_type });
    } else {
      const { item_url, depth, height, width, weight, color, price, brand, images } = row;
      catalog.variants.set(sku, {
        sku,
        external_id,
        name,
        item_url,
        depth,
        height,
        width,
        weight,
        color,
        price,
        brand,
        images,
      });
    }
  }
  return catalog;
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

/**
 * The embedded database's form: one statement whose rows come back as one JSON text of arrays, a
 * row an array of its columns in a fixed order (without the per-row column names of `json_agg` over
 * records, which cost PostgreSQL twice the time). Numbers are float8 written by PostgreSQL as the
 * shortest text that reads back as the same double: the values the worker stored.
 */
export async function readAsJson(
  db: Pick<Database, 'query'>,
  tenantId: string,
  keys: CatalogKeys,
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
        FROM (SELECT x.* FROM unnest($3::text[]) AS k(sku) CROSS JOIN LATERAL (${VARIANT_PROBE}) AS x
              UNION ALL ${LOOKALIKE_VARIANTS}) AS x)
     )::text AS rows`,
    readParameters(tenantId, keys),
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
