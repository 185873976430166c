import type { Queryable } from '../db/database.ts';
import type { StoredProduct } from './ingest-parts.ts';

/**
 * One page of the tenant's products in the ingest shape, by external_id from just after
 * `afterExternalId` (exclusive) and from `fromExternalId` (inclusive) on: one statement for the
 * page's products with their variants (by `variants_by_product`, in creation order) and images as
 * stored, so a product reads as one snapshot. Images are the stored array (`{url}` or
 * `{url, angle}`, `angle` null after a clear), which the writer turns into the ingest shape.
 *
 * The page comes back as one JSON text, parsed here at once: on PGlite that took a third less time
 * than a row per product, whose JSON column each driver parses apart, and on a server the same
 * (docs/export.md).
 */
export async function readExportPage(
  db: Queryable,
  page: { tenantId: string; afterExternalId: string | null; fromExternalId: string | null; limit: number },
): Promise<StoredProduct[]> {
  const [row] = await db.query<{ page: string | null }>(
    `SELECT json_agg(x ORDER BY x.external_id)::text AS page
     FROM (
       SELECT p.external_id, p.name, p.description, p.style, p.type, p.sub_type,
              COALESCE((
                SELECT json_agg(json_build_object(
                         'sku', v.sku, 'name', v.name, 'item_url', v.item_url, 'depth', v.depth,
                         'height', v.height, 'width', v.width, 'weight', v.weight, 'color', v.color,
                         'price', v.price, 'brand', v.brand, 'images', v.images) ORDER BY v.seq)
                FROM variants v WHERE v.tenant_id = p.tenant_id AND v.external_id = p.external_id
              ), '[]'::json) AS variants
       FROM products p
       WHERE p.tenant_id = $1 AND ($2::text IS NULL OR p.external_id > $2)
         AND ($4::text IS NULL OR p.external_id >= $4)
       ORDER BY p.external_id LIMIT $3
     ) AS x`,
    [page.tenantId, page.afterExternalId, page.limit, page.fromExternalId],
  );
  return row?.page ? (JSON.parse(row.page) as StoredProduct[]) : [];
}

/**
 * The first product (by external_id) of the tenant's selection that holds a text longer than
 * `maxLength` characters in any field of the export (its own, its variants', an image url), or
 * null. One statement over the selection, read before an export whose form cannot carry such a text.
 */
export async function findProductWithLongText(
  db: Queryable,
  query: { tenantId: string; prefix: string | null; maxLength: number },
): Promise<string | null> {
  const [row] = await db.query<{ external_id: string }>(
    `SELECT p.external_id
     FROM products p
     WHERE p.tenant_id = $1
       AND ($2::text IS NULL OR (p.external_id >= $2 AND left(p.external_id, char_length($2)) = $2))
       AND (char_length(p.external_id) > $3 OR char_length(p.name) > $3 OR char_length(p.description) > $3
         OR char_length(p.style) > $3 OR char_length(p.type) > $3 OR char_length(p.sub_type) > $3
         OR EXISTS (
           SELECT 1 FROM variants v
           WHERE v.tenant_id = p.tenant_id AND v.external_id = p.external_id
             AND (char_length(v.sku) > $3 OR char_length(v.name) > $3 OR char_length(v.item_url) > $3
               OR char_length(v.color) > $3 OR char_length(v.brand) > $3
               OR EXISTS (SELECT 1 FROM jsonb_array_elements(v.images) AS i
                          WHERE char_length(i->>'url') > $3))))
     ORDER BY p.external_id LIMIT 1`,
    [query.tenantId, query.prefix, query.maxLength],
  );
  return row?.external_id ?? null;
}
