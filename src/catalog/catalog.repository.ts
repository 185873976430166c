import type { Queryable } from '../db/database.ts';
import { flatString } from '../runtime/flat-string.ts';
import type { ProductRow, OwnedVariant, VariantRow } from './merge-items.ts';
import type { ProductView } from './product-schema.ts';
import { VARIANT_PROBE } from './variant-probe.ts';

/** SQL of the catalog: the set-based upserts of the worker and the reads of the API. */

/** The transaction's time at millisecond precision, the resolution the API shows. */
const NOW = `date_trunc('milliseconds', now())`;

/**
 * A product's next `updated_at`: `stamp`, or just after the stored one when that is not earlier. Two
 * writers stamp a product: a chunk with its transaction's start, a variant delete with its own
 * clock (catalog-delete.repository.ts). A chunk that waited on a delete's row lock started before the
 * delete stamped; without this it would write an earlier time than the delete's, and a client that
 * syncs by `updated_at` would miss the chunk's change.
 */
export const laterThan = (stored: string, stamp: string) =>
  `GREATEST(${stamp}, ${stored} + interval '1 millisecond')`;

/**
 * Stored variants among `skus`: which product owns each, and its images; read only on the worker's
 * rare paths (an upsert found a sku owned by another product, see {@link upsertVariants}, or a
 * failed write is narrowed down item by item). One primary-key probe per sku ({@link VARIANT_PROBE}):
 * with `sku = ANY(…)` and stale statistics the planner scanned the tenant's whole index range, which
 * grew with the catalog (3 ms per batch on an empty catalog, 150 ms at 100 batches); probes stay flat.
 */
export async function findVariantsBySku(
  tx: Queryable,
  tenantId: string,
  skus: readonly string[],
): Promise<Map<string, OwnedVariant>> {
  const rows = await tx.query<OwnedVariant>(
    `SELECT v.sku, v.external_id, v.images FROM unnest($2::text[]) AS k(sku) CROSS JOIN LATERAL (${VARIANT_PROBE}) AS v`,
    [tenantId, skus],
  );
  return new Map(rows.map((row) => [row.sku, row]));
}

/**
 * Locks the stored rows of `externalIds` until the transaction ends (one probe each, as above); the
 * ones not stored lock nothing. A delete takes its product's row first too, so a write that reads
 * stored variants after this cannot be overtaken by a delete of its products between its read and
 * its write.
 */
export async function lockProducts(
  tx: Queryable,
  tenantId: string,
  externalIds: readonly string[],
): Promise<void> {
  await tx.query(
    `SELECT 1
     FROM unnest($2::text[]) AS k(external_id)
     CROSS JOIN LATERAL (
       SELECT 1 FROM products WHERE tenant_id = $1 AND external_id = k.external_id FOR UPDATE
     ) AS p`,
    [tenantId, externalIds],
  );
}

/**
 * Rows serialized once for `json_to_recordset`, with their count: the one JSON array a table's
 * set-based upsert takes. The worker serializes a chunk's rows as soon as they are merged, so the
 * parsed items and merged rows they came from can be collected before the rows are written.
 */
export interface SerializedRows {
  readonly json: string;
  readonly count: number;
}

/** Serializes rows for a statement, as one flat string. */
export function serializeRows(rows: readonly ProductRow[] | readonly VariantRow[]): SerializedRows {
  return { json: flatString(JSON.stringify(rows)), count: rows.length };
}

/**
 * The keys of the variants a chunk writes that its products upsert needs for the search documents:
 * each variant's sku, product and brand, as three arrays in the rows' order. Passed as arrays
 * rather than the variants' JSON, which PostgreSQL would parse whole (1.2 MB for 3000 variants) to
 * read three short fields of it: 25 ms less per 1000 products (docs/performance.md, history).
 */
export interface VariantKeys {
  readonly skus: readonly string[];
  readonly externalIds: readonly string[];
  readonly brands: readonly string[];
}

/** The keys of `rows` for {@link upsertProducts}. */
export const variantKeys = (rows: readonly VariantRow[]): VariantKeys => ({
  skus: rows.map((row) => row.sku),
  externalIds: rows.map((row) => row.external_id),
  brands: rows.map((row) => row.brand),
});

/**
 * Inserts or updates products, one statement for all of them (at most one row per external_id),
 * with their search documents (migration 013). A document holds the skus and brands of the product's
 * variants as they will be once `variants` (the chunk's, written next) are: the stored ones the
 * chunk does not send, and the chunk's. The stored ones are read with one index probe per product (a
 * LATERAL kept apart by `OFFSET 0`, as `LIMIT 1` keeps the probes of `findVariantsBySku`): told the
 * exact size of `incoming`, the planner hashed the tenant's every variant instead, 150 ms a chunk
 * at 100,000 products. Computing it here writes each product row once per chunk;
 * a refresh after the variants upsert would write it twice. A sku the chunk sends that another
 * product owns makes the variants upsert roll the transaction back, so it never reaches a document.
 *
 * A stored product keeps its `updated_at` here, and its row is not written at all when its columns
 * and document are as stored: whether an item changed the product is the history's to say (its
 * entries, made while this runs), and {@link touchProducts} then moves `updated_at` of those it
 * changed (docs/decisions.md). A new product is inserted with the chunk's time.
 */
export async function upsertProducts(
  tx: Queryable,
  tenantId: string,
  products: SerializedRows,
  variants: VariantKeys,
): Promise<void> {
  if (products.count === 0) return;
  await tx.query(
    `WITH incoming AS MATERIALIZED (
       SELECT * FROM unnest($3::text[], $4::text[], $5::text[]) AS i(sku, external_id, brand)
     ),
     terms AS (
       SELECT t.external_id, string_agg(t.sku, ' ') AS skus, string_agg(DISTINCT t.brand, ' ') AS brands
       FROM (
         SELECT v.external_id, v.sku, v.brand
         FROM (SELECT DISTINCT external_id FROM incoming) AS k
         CROSS JOIN LATERAL (
           SELECT external_id, sku, brand FROM variants WHERE tenant_id = $1 AND external_id = k.external_id
           OFFSET 0
         ) AS v
         WHERE NOT EXISTS (SELECT 1 FROM incoming i WHERE i.sku = v.sku)
         UNION ALL
         SELECT external_id, sku, brand FROM incoming
       ) AS t
       GROUP BY t.external_id
     )
     INSERT INTO products AS p (tenant_id, external_id, name, description, style, type, sub_type, created_at, updated_at, search)
     SELECT $1, x.external_id, x.name, x.description, x.style, x.type, x.sub_type, ${NOW}, ${NOW},
            catalog_search_document(x.external_id, x.name, t.skus, t.brands)
     FROM json_to_recordset($2::json)
       AS x(external_id text, name text, description text, style text, type text, sub_type text)
     LEFT JOIN terms AS t ON t.external_id = x.external_id
     ON CONFLICT (tenant_id, external_id) DO UPDATE SET
       name = EXCLUDED.name, description = EXCLUDED.description, style = EXCLUDED.style,
       type = EXCLUDED.type, sub_type = EXCLUDED.sub_type, search = EXCLUDED.search
     WHERE (p.name, p.description, p.style, p.type, p.sub_type, p.search)
       IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.description, EXCLUDED.style, EXCLUDED.type, EXCLUDED.sub_type,
                         EXCLUDED.search)`,
    [tenantId, products.json, variants.skus, variants.externalIds, variants.brands],
  );
}

/**
 * Moves `updated_at` of the stored products `externalIds` to the chunk's time (`laterThan`): those
 * an applied item changed, as the chunk's history entries say (src/worker/chunk-writer.ts), so
 * that `updated_at` and the history follow one comparison and cannot disagree. A product that
 * items left as stored keeps its `updated_at`. One index probe per product; the chunk holds their
 * row locks.
 */
export async function touchProducts(
  tx: Queryable,
  tenantId: string,
  externalIds: readonly string[],
): Promise<void> {
  if (externalIds.length === 0) return;
  await tx.query(
    `UPDATE products AS p SET updated_at = ${laterThan('p.updated_at', NOW)}
     FROM unnest($2::text[]) AS k(external_id)
     WHERE p.tenant_id = $1 AND p.external_id = k.external_id`,
    [tenantId, externalIds],
  );
}

/**
 * Inserts or updates variants, one statement for all of them, and returns how many rows it wrote.
 * Rows arrive in order of first appearance, which is the order new variants get their sequence
 * numbers in. Each row's images are a patch, folded into the stored ones by url (`merge_images`,
 * migration 005). A variant never changes product: a stored sku owned by another product is left as
 * it is and not counted, and the caller, seeing fewer rows written than sent, rolls the
 * transaction back to find the items at fault.
 */
export async function upsertVariants(
  tx: Queryable,
  tenantId: string,
  variants: SerializedRows,
): Promise<number> {
  if (variants.count === 0) return 0;
  const [result] = await tx.query<{ written: number }>(
    `WITH written AS (
       INSERT INTO variants AS v (tenant_id, sku, external_id, name, item_url, depth, height, width, weight,
                                  color, price, brand, images, created_at, updated_at)
       SELECT $1, x.sku, x.external_id, x.name, x.item_url, x.depth, x.height, x.width, x.weight,
              x.color, x.price, x.brand, x.images, ${NOW}, ${NOW}
       FROM json_to_recordset($2::json)
         AS x(sku text, external_id text, name text, item_url text, depth float8, height float8, width float8,
              weight float8, color text, price float8, brand text, images jsonb)
       ON CONFLICT (tenant_id, sku) DO UPDATE SET
         name = EXCLUDED.name, item_url = EXCLUDED.item_url, depth = EXCLUDED.depth, height = EXCLUDED.height,
         width = EXCLUDED.width, weight = EXCLUDED.weight, color = EXCLUDED.color, price = EXCLUDED.price,
         brand = EXCLUDED.brand, images = merge_images(v.images, EXCLUDED.images), updated_at = EXCLUDED.updated_at
       WHERE v.external_id = EXCLUDED.external_id
       RETURNING 1
     )
     SELECT count(*)::int AS written FROM written`,
    [tenantId, variants.json],
  );
  return result?.written ?? 0;
}

/**
 * The SQL select list of a product `p` in the read shape of docs/reference.md §9 (the search reads it too).
 * test/catalog/field-lists.test.ts holds its fields to the item schema.
 */
export const PRODUCT_VIEW_SELECT_LIST = `
  p.external_id, p.name, p.description, p.style, p.type, p.sub_type,
         to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
         to_char(p.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at,
         COALESCE((
           SELECT json_agg(json_build_object(
                    'sku', v.sku, 'name', v.name, 'item_url', v.item_url, 'depth', v.depth, 'height', v.height,
                    'width', v.width, 'weight', v.weight, 'color', v.color, 'price', v.price, 'brand', v.brand,
                    'images', (
                      -- A stored image without an angle was sent without one: null.
                      SELECT COALESCE(json_agg(json_build_object('url', i.image -> 'url', 'angle', i.image -> 'angle')
                                               ORDER BY i.n), '[]'::json)
                      FROM jsonb_array_elements(v.images) WITH ORDINALITY AS i(image, n))) ORDER BY v.seq)
           FROM variants v WHERE v.tenant_id = p.tenant_id AND v.external_id = p.external_id
         ), '[]'::json) AS variants`;

const PRODUCT_VIEW = `SELECT ${PRODUCT_VIEW_SELECT_LIST} FROM products p`;

/** The tenant's product with its variants and images, in the read shape of docs/reference.md §9, or null. */
export async function findProduct(
  db: Queryable,
  tenantId: string,
  externalId: string,
): Promise<ProductView | null> {
  const rows = await db.query<ProductView>(`${PRODUCT_VIEW} WHERE p.tenant_id = $1 AND p.external_id = $2`, [
    tenantId,
    externalId,
  ]);
  return rows[0] ?? null;
}

/** Products ordered by external_id, after `afterExternalId` (exclusive) and from `fromExternalId` on. */
export async function listProducts(
  db: Queryable,
  query: { tenantId: string; afterExternalId: string | null; fromExternalId: string | null; limit: number },
): Promise<ProductView[]> {
  return db.query<ProductView>(
    `${PRODUCT_VIEW} WHERE p.tenant_id = $1 AND ($2::text IS NULL OR p.external_id > $2)
       AND ($4::text IS NULL OR p.external_id >= $4)
     ORDER BY p.external_id LIMIT $3`,
    [query.tenantId, query.afterExternalId, query.limit, query.fromExternalId],
  );
}
