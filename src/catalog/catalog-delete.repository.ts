import type { Queryable } from '../db/database.ts';
import { laterThan } from './catalog.repository.ts';
import type { VariantRow } from './merge-items.ts';

/** SQL of the catalog's deletes (docs/reference.md §10.5). */

/**
 * Deletes a product; its variants (and their images, stored with them) go by the foreign key's
 * cascade in the same statement. False when the tenant has no such product.
 */
export async function deleteProduct(db: Queryable, tenantId: string, externalId: string): Promise<boolean> {
  const rows = await db.query(`DELETE FROM products WHERE tenant_id = $1 AND external_id = $2 RETURNING 1`, [
    tenantId,
    externalId,
  ]);
  return rows.length === 1;
}

/**
 * Locks a product's row until the transaction ends; false when there is none. Every write that
 * changes a product's set of variants holds this lock: the worker's chunk upserts the product row
 * before its variants, and a variant delete takes it before counting the siblings.
 */
export async function lockProduct(tx: Queryable, tenantId: string, externalId: string): Promise<boolean> {
  const rows = await tx.query(`SELECT 1 FROM products WHERE tenant_id = $1 AND external_id = $2 FOR UPDATE`, [
    tenantId,
    externalId,
  ]);
  return rows.length === 1;
}

/** How many variants a product has, and whether `sku` is one of them. */
export async function countVariants(
  tx: Queryable,
  key: { tenantId: string; externalId: string; sku: string },
): Promise<{ count: number; has: boolean }> {
  const [row] = await tx.query<{ count: number; has: boolean }>(
    `SELECT count(*)::int AS count, COALESCE(bool_or(sku = $3), false) AS has
     FROM variants WHERE tenant_id = $1 AND external_id = $2`,
    [key.tenantId, key.externalId, key.sku],
  );
  return row ?? { count: 0, has: false };
}

/**
 * Deletes one variant of a product (with its images), marks the product updated and takes the
 * variant's sku and brand out of its search document (migration 013). The product a
 * client reads has changed, and one that syncs by `updated_at` must see it. The time is the clock's at
 * this statement, which runs under the product's row lock, and always later than the stored one
 * (`laterThan`, which the chunks' upsert uses too). Returns the deleted row (for the product's
 * history), or null when there was none.
 */
export async function deleteVariant(
  tx: Queryable,
  key: { tenantId: string; externalId: string; sku: string },
): Promise<VariantRow | null> {
  const rows = await tx.query<VariantRow>(
    `WITH gone AS (
       DELETE FROM variants WHERE tenant_id = $1 AND sku = $2 AND external_id = $3
       RETURNING sku, external_id, name, item_url, depth, height, width, weight, color, price, brand, images
     ), touched AS (
       UPDATE products SET updated_at = ${laterThan('updated_at', "date_trunc('milliseconds', clock_timestamp())")},
         search = (
           -- This statement's snapshot still holds the deleted variant: the document leaves it out.
           SELECT catalog_search_document(products.external_id, products.name, string_agg(v.sku, ' '),
                                          string_agg(DISTINCT v.brand, ' '))
           FROM variants v WHERE v.tenant_id = $1 AND v.external_id = $3 AND v.sku <> $2
         )
       WHERE tenant_id = $1 AND external_id = $3 AND EXISTS (SELECT 1 FROM gone)
     )
     SELECT * FROM gone`,
    [key.tenantId, key.sku, key.externalId],
  );
  return rows[0] ?? null;
}
