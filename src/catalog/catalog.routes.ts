import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Authorize } from '../auth/authorize.ts';
import { principalOf } from '../auth/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { documented, Page, PageQuery, problemResponses } from '../http/schemas.ts';
import { ProductView } from './product-schema.ts';
import type { CatalogService } from './catalog.service.ts';

const ProductParams = Type.Object({ external_id: Type.String() });
const ProductQuery = PageQuery(500, 100);

/** `GET /products` and `GET /products/{external_id}` (CONTRACT §9). */
export async function catalogRoutes(
  app: FastifyInstance,
  { catalog, authorize }: { catalog: CatalogService; authorize: Authorize },
): Promise<void> {
  const tags = ['catalog'];

  app.get<{ Querystring: Static<typeof ProductQuery> }>(
    '/products',
    {
      onRequest: authorize(SCOPES.catalogRead),
      schema: {
        tags,
        summary: 'List stored products by external_id',
        querystring: ProductQuery,
        response: {
          200: documented('A page of products, by external_id', Page(ProductView, 'ProductPage')),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { limit = 100, cursor } = request.query;
      return catalog.listProducts(principalOf(request).tenantId, { limit, cursor });
    },
  );

  app.get<{ Params: Static<typeof ProductParams> }>(
    '/products/:external_id',
    {
      onRequest: authorize(SCOPES.catalogRead),
      schema: {
        tags,
        summary: 'Get one stored product',
        params: ProductParams,
        response: {
          200: documented('The stored product', ProductView),
          ...problemResponses(401, 403, 404),
        },
      },
    },
    async (request) => catalog.getProduct(principalOf(request).tenantId, request.params.external_id),
  );
}
