import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Authorize } from '../http/authorize.ts';
import { principalOf } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { deleteSchema, documented, problemResponses, readSchema } from '../http/schemas.ts';
import { HistoryPage, HistoryQuery } from './history.schemas.ts';
import { PageQuery, PageSchema } from '../pagination/page.ts';
import { ProductView } from './product-schema.ts';
import type { CatalogService } from './catalog.service.ts';
import { SearchQueryProperties } from './catalog-search.schemas.ts';
import { isSearch } from './catalog-search.service.ts';

const ProductParams = Type.Object({ external_id: Type.String() });
const VariantParams = Type.Object({ external_id: Type.String(), sku: Type.String() });
const ProductQuery = PageQuery(500, 100, {
  prefix: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Only the products whose external_id starts with this (case-sensitive)',
    }),
  ),
  ...SearchQueryProperties,
});
const ProductPage = Type.Object(
  {
    ...PageSchema(ProductView, 'ProductPage').properties,
    total: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'With `q` or a filter: the exact number of matches, all pages',
      }),
    ),
  },
  { additionalProperties: false, title: 'ProductPage' },
);

/**
 * `GET /products` and `GET /products/{external_id}` (docs/reference.md §9), the deletes (§10.5) and a
 * product's history (§11.3).
 */
export async function catalogRoutes(
  app: FastifyInstance,
  { catalog, authorize }: { catalog: CatalogService; authorize: Authorize },
): Promise<void> {
  const tags = ['catalog'];

  app.get<{ Querystring: Static<typeof ProductQuery> }>(
    '/products',
    {
      onRequest: authorize(SCOPES.catalogRead),
      schema: readSchema(
        { querystring: ProductQuery },
        {
          tags,
          summary: 'List stored products by external_id, or search them (q, filters) most relevant first',
          description: 'A page of products: by external_id, or for a search by relevance, with `total`',
          answer: ProductPage,
        },
      ),
    },
    async (request) => {
      const { limit = 100, cursor, prefix, ...criteria } = request.query;
      const tenantId = principalOf(request).tenantId;
      if (isSearch(criteria))
        return catalog.searchProducts(tenantId, { ...criteria, prefix }, { limit, cursor });
      return catalog.listProducts(tenantId, { limit, cursor, prefix });
    },
  );

  app.get<{ Params: Static<typeof ProductParams> }>(
    '/products/:external_id',
    {
      onRequest: authorize(SCOPES.catalogRead),
      schema: readSchema(
        { params: ProductParams },
        {
          tags,
          summary: 'Get one stored product',
          description: 'The stored product',
          answer: ProductView,
        },
      ),
    },
    async (request) => catalog.getProduct(principalOf(request).tenantId, request.params.external_id),
  );
  app.get<{ Params: Static<typeof ProductParams>; Querystring: Static<typeof HistoryQuery> }>(
    '/products/:external_id/history',
    {
      onRequest: authorize(SCOPES.catalogRead),
      schema: {
        tags,
        summary: 'List the recorded changes of a product, newest first',
        params: ProductParams,
        querystring: HistoryQuery,
        response: {
          200: documented('A page of the product’s history, newest first', HistoryPage),
          ...problemResponses(400, 401, 403, 404),
        },
      },
    },
    async (request) => {
      const { limit = 100, cursor } = request.query;
      const tenantId = principalOf(request).tenantId;
      return catalog.listHistory(tenantId, request.params.external_id, { limit, cursor });
    },
  );

  app.delete<{ Params: Static<typeof ProductParams> }>(
    '/products/:external_id',
    {
      onRequest: authorize(SCOPES.catalogWrite),
      schema: deleteSchema(ProductParams, { tags, summary: 'Delete a product with its variants' }),
    },
    async (request, reply) => {
      await catalog.deleteProduct(principalOf(request).tenantId, request.params.external_id);
      return reply.code(204).send();
    },
  );

  app.delete<{ Params: Static<typeof VariantParams> }>(
    '/products/:external_id/variants/:sku',
    {
      onRequest: authorize(SCOPES.catalogWrite),
      schema: deleteSchema(
        VariantParams,
        { tags, summary: 'Delete one variant of a product (not its last)' },
        409,
      ),
    },
    async (request, reply) => {
      const { external_id: externalId, sku } = request.params;
      await catalog.deleteVariant(principalOf(request).tenantId, externalId, sku);
      return reply.code(204).send();
    },
  );
}
