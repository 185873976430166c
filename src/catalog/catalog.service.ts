import type { Database } from '../db/database.ts';
import { primaryReads, type ReplicaReads } from '../db/replica-reads.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import { ConflictError, NotFoundError } from '../errors/app-errors.ts';
import type { Page } from '../pagination/page.ts';
import { findProduct, listProducts } from './catalog.repository.ts';
import { countVariants, deleteProduct, deleteVariant, lockProduct } from './catalog-delete.repository.ts';
import type { ProductView } from './product-schema.ts';
import type { SearchCriteria } from './catalog-search.repository.ts';
import { searchCatalog, type SearchPage } from './catalog-search.service.ts';
import { variantValue } from './catalog-diff.ts';
import { insertHistory, listHistory, productIsKnown } from './history.repository.ts';
import type { HistoryEntry } from './history.schemas.ts';

/** What a catalog delete removed, for metrics. */
export type DeleteTarget = 'product' | 'variant';

/**
 * Reading the stored catalog (docs/reference.md §9), so a client can see what an upsert did, and deleting
 * from it (§10.5).
 */
export interface CatalogService {
  getProduct(tenantId: string, externalId: string): Promise<ProductView>;
  /** A page of the catalog by external_id; with `prefix`, of the products whose external_id starts with it. */
  listProducts(
    tenantId: string,
    query: { limit: number; cursor?: string; prefix?: string },
  ): Promise<Page<ProductView>>;
  /**
   * Searches the catalog (docs/reference.md §11.7): products matching every word of `q` and every filter,
   * most relevant first, with the exact number of matches.
   */
  searchProducts(
    tenantId: string,
    criteria: SearchCriteria,
    page: { limit: number; cursor?: string },
  ): Promise<SearchPage>;
  /**
   * A page of a product's history, newest first (docs/reference.md §11.3); 404 when the tenant never stored
   * the product (it has neither the product nor history of it).
   */
  listHistory(
    tenantId: string,
    externalId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<HistoryEntry>>;
  /** Deletes a product and its variants at once; 404 when the tenant has no such product. */
  deleteProduct(tenantId: string, externalId: string): Promise<void>;
  /** Deletes one variant; 404 when the product has no such sku, 409 when it is the last one. */
  deleteVariant(tenantId: string, externalId: string, sku: string): Promise<void>;
}

/** A change made through the API rather than by a batch: no batch, no item, no label. */
const apiSource = (tenantId: string) => ({ tenantId, batchId: null });

// U+0000 cannot be stored (items holding it are refused), and PostgreSQL text cannot hold it.
const storable = (key: string) => !key.includes('\u0000');

/**
 * Creates the catalog reads (one product by `external_id`, the list ordered by it) and deletes.
 *
 * Deletes do not take the tenant's worker lock: the worker holds it while it drains the tenant's
 * whole backlog, and a delete applies at once (docs/reference.md §10.5). Row locks order a delete with the worker's
 * chunks instead, each chunk being one transaction that upserts a product's row before its
 * variants: a delete waits for a chunk writing that product, or the chunk waits for the delete and
 * then creates the product anew. A sku a delete frees is free once the 204 is sent, and nothing
 * remembers its old owner, so a later batch takes it without `sku_conflict` (docs/catalog-deletes.md).
 */
export function createCatalogService({
  db,
  reads = primaryReads(db),
  onDeleted,
}: {
  db: Database;
  /**
   * Where the search and product history read: a replica that has replayed every write committed
   * before the request (docs/deployment.md#read-replica), or `db`. One product and the list stay on `db`.
   */
  reads?: ReplicaReads;
  onDeleted?: (target: DeleteTarget) => void;
}): CatalogService {
  return {
    async getProduct(tenantId, externalId) {
      const product = storable(externalId) ? await findProduct(db, tenantId, externalId) : null;
      if (!product) throw new NotFoundError('No product with this external_id.');
      return product;
    },
    async listProducts(tenantId, { limit, cursor, prefix }) {
      const scope = 'products';
      const afterExternalId = cursor === undefined ? null : decodeCursor<string>(cursor, scope, 'string');
      if (prefix !== undefined && !storable(prefix)) return { data: [], next_cursor: null };
      const read = await listProducts(db, {
        tenantId,
        afterExternalId,
        fromExternalId: prefix ?? null,
        limit: limit + 1,
      });
      // Ordered by external_id, the ids with a prefix are one run from the prefix itself on: the
      // statement starts there, and the first id without the prefix ends the list.
      const end = prefix === undefined ? -1 : read.findIndex((row) => !row.external_id.startsWith(prefix));
      const rows = end === -1 ? read : read.slice(0, end);
      const data = rows.slice(0, limit);
      const last = data.at(-1);
      return {
        data,
        next_cursor: rows.length > limit && last ? encodeCursor(scope, last.external_id) : null,
      };
    },

    searchProducts: async (tenantId, criteria, page) =>
      searchCatalog(await reads.consistentReader(), tenantId, criteria, page),

    async listHistory(tenantId, externalId, { limit, cursor }) {
      const scope = 'product-history';
      const beforeN = cursor === undefined ? null : decodeCursor<number>(cursor, scope, 'number');
      const source = await reads.consistentReader();
      if (!storable(externalId) || !(await productIsKnown(source, tenantId, externalId))) {
        throw new NotFoundError('No product with this external_id.');
      }
      const rows = await listHistory(source, { tenantId, externalId, beforeN, limit: limit + 1 });
      const data = rows
        .slice(0, limit)
        .map(({ n: _n, label, ...entry }) => (label === null ? entry : { ...entry, label }));
      const last = rows[limit - 1];
      return { data, next_cursor: rows.length > limit && last ? encodeCursor(scope, last.n) : null };
    },

    async deleteProduct(tenantId, externalId) {
      await db.transaction(async (tx) => {
        if (!storable(externalId) || !(await deleteProduct(tx, tenantId, externalId))) {
          throw new NotFoundError('No product with this external_id.');
        }
        // Under the delete's row lock, as every writer of the product's history (docs/reference.md §11.3).
        await insertHistory(tx, apiSource(tenantId), [
          { external_id: externalId, ordinal: 1, action: 'delete', item_index: null, diff: [] },
        ]);
      });
      onDeleted?.('product');
    },

    async deleteVariant(tenantId, externalId, sku) {
      const key = { tenantId, externalId, sku };
      await db.transaction(async (tx) => {
        // The product's row first, so two deletes of its last two variants cannot both pass the count.
        if (!storable(externalId) || !(await lockProduct(tx, tenantId, externalId))) {
          throw new NotFoundError('No product with this external_id.');
        }
        const variants = await countVariants(tx, key);
        if (!storable(sku) || !variants.has) {
          throw new NotFoundError('The product has no variant with this sku.');
        }
        if (variants.count === 1) {
          throw new ConflictError('This is the product’s last variant; delete the product instead.');
        }
        const gone = await deleteVariant(tx, key);
        if (!gone) throw new Error('a variant counted under its product’s lock was not there to delete');
        const diff = [{ path: 'variants', op: 'remove' as const, sku, from: variantValue(gone) }];
        await insertHistory(tx, apiSource(tenantId), [
          { external_id: externalId, ordinal: 1, action: 'update', item_index: null, diff },
        ]);
      });
      onDeleted?.('variant');
    },
  };
}
