import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { Authorize } from '../auth/authorize.ts';
import { principalOf } from '../auth/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { Page, PageQuery, problemResponses } from '../http/schemas.ts';
import type { CatalogService } from './catalog.service.ts';

const Image = Type.Object(
  { url: Type.String(), angle: Type.Union([Type.Number(), Type.Null()]) },
  { additionalProperties: false },
);

const Variant = Type.Object(
  {
    sku: Type.String(),
    name: Type.String(),
    item_url: Type.String(),
    depth: Type.Number(),
    height: Type.Number(),
    width: Type.Number(),
    weight: Type.Number(),
    color: Type.String(),
    price: Type.Number(),
    brand: Type.String(),
    images: Type.Array(Image),
  },
  { additionalProperties: false },
);

/** A stored product: the ingest shape plus timestamps; variants in order of creation. */
export const Product = Type.Object(
  {
    external_id: Type.String(),
    name: Type.String(),
    description: Type.String(),
    style: Type.String(),
    type: Type.String(),
    sub_type: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    variants: Type.Array(Variant),
  },
  { additionalProperties: false, title: 'Product' },
);

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
        response: { 200: Page(Product, 'ProductPage'), ...problemResponses(400, 401, 403) },
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
        response: { 200: Product, ...problemResponses(401, 403, 404) },
      },
    },
    async (request) => catalog.getProduct(principalOf(request).tenantId, request.params.external_id),
  );
}
