import type { Queryable } from '../db/database.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { NotFoundError } from '../http/errors.ts';
import type { Page } from '../ingestion/ingestion.service.ts';
import { findProduct, listProducts } from './catalog.repository.ts';
import type { ProductView } from './product-schema.ts';

/** Reading the stored catalog (CONTRACT §9), so a client can see what an upsert did. */
export interface CatalogService {
  getProduct(tenantId: string, externalId: string): Promise<ProductView>;
  listProducts(tenantId: string, query: { limit: number; cursor?: string }): Promise<Page<ProductView>>;
}

/** Creates the catalog reads: one product by `external_id`, and the list ordered by it. */
export function createCatalogService({ db }: { db: Queryable }): CatalogService {
  return {
    async getProduct(tenantId, externalId) {
      // U+0000 cannot be stored (items holding it are refused), and PostgreSQL text cannot hold it.
      const product = externalId.includes('\u0000') ? null : await findProduct(db, tenantId, externalId);
      if (!product) throw new NotFoundError('No product with this external_id.');
      return product;
    },
    async listProducts(tenantId, { limit, cursor }) {
      const scope = 'products';
      const afterExternalId = cursor === undefined ? null : decodeCursor<string>(cursor, scope, 'string');
      const rows = await listProducts(db, { tenantId, afterExternalId, limit: limit + 1 });
      const data = rows.slice(0, limit);
      const last = data.at(-1);
      return {
        data,
        next_cursor: rows.length > limit && last ? encodeCursor(scope, last.external_id) : null,
      };
    },
  };
}
