/** GET /openapi.json: it documents every route, the spec's enumerations, and what the routes answer. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';

import {
  FURNITURE_COLORS,
  FURNITURE_STYLES,
  FURNITURE_SUB_TYPES,
  FURNITURE_TYPES,
} from '../../src/catalog/enums.ts';
import { FIELD_ERROR_CODES } from '../../src/http/errors.ts';
import { ingest } from '../helpers/api-assertions.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

let svc: TestService;
let document: OpenApiDocument;

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

before(async () => {
  svc = await startTestService();
  const res = await svc.request({ method: 'GET', url: '/openapi.json', token: null });
  assert.equal(res.statusCode, 200);
  document = res.json<OpenApiDocument>();
});
after(() => svc.stop());

/** A validator of the response documented for `method path` with `status` (problem+json for errors). */
function documentedResponse(path: string, method: string, status: number) {
  const type = status < 400 ? 'application/json' : 'application/problem+json';
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(document, 'openapi');
  const pointer = ['paths', path, method, 'responses', String(status), 'content', type, 'schema']
    .map((part) => part.replace(/~/g, '~0').replace(/\//g, '~1'))
    .join('/');
  return ajv.compile({ $ref: `openapi#/${pointer}` });
}

function assertMatches(path: string, method: string, status: number, body: unknown): void {
  const validate = documentedResponse(path, method, status);
  assert.equal(validate(body), true, `${method} ${path} ${status}: ${JSON.stringify(validate.errors)}`);
}

/** The schema of the documented 200 answer of `method path`, with `$ref`s left as they are. */
function schemaOf(path: string, method: string): Record<string, unknown> {
  const response = document.paths[path]![method]!.responses['200'] as {
    content: Record<string, { schema: Record<string, unknown> }>;
  };
  return response.content['application/json']!.schema;
}

void test('is OpenAPI 3.1 and lists every operation with the statuses it answers', () => {
  assert.equal(document.openapi, '3.1.0');
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => [
      `${method.toUpperCase()} ${path}`,
      Object.keys(operation.responses).sort(),
    ]),
  );
  assert.deepEqual(Object.fromEntries(operations), {
    'GET /healthz': ['200'],
    'GET /readyz': ['200', '503'],
    'POST /products/ingestions': ['202', '400', '401', '403', '413', '415', '429', 'default'],
    'GET /products/ingestions': ['200', '400', '401', '403', 'default'],
    'GET /products/ingestions/{batch_id}': ['200', '401', '403', '404', 'default'],
    'GET /products/ingestions/{batch_id}/errors': ['200', '400', '401', '403', '404', 'default'],
    'GET /products': ['200', '400', '401', '403', 'default'],
    'GET /products/{external_id}': ['200', '401', '403', '404', 'default'],
  });
});

void test("a stored product's schema carries the spec's enumerations, and error codes their closed set", () => {
  const product = schemaOf('/products/{external_id}', 'get') as {
    properties: Record<
      string,
      { enum?: unknown; items?: { properties: Record<string, { enum?: unknown }> } }
    >;
  };
  assert.deepEqual(product.properties.style!.enum, FURNITURE_STYLES);
  assert.deepEqual(product.properties.type!.enum, FURNITURE_TYPES);
  assert.deepEqual(product.properties.sub_type!.enum, FURNITURE_SUB_TYPES);
  assert.deepEqual(product.properties.variants!.items!.properties.color!.enum, FURNITURE_COLORS);

  const page = schemaOf('/products/ingestions/{batch_id}/errors', 'get') as {
    properties: {
      data: { items: { properties: { errors: { items: { properties: { code: { enum: unknown } } } } } } };
    };
  };
  assert.deepEqual(
    page.properties.data.items.properties.errors.items.properties.code.enum,
    FIELD_ERROR_CODES,
  );
});

void test('what the routes answer matches what the document says they answer', async () => {
  const tenant = svc.tenant();
  const token = await svc.token(tenant);
  const stored = product({
    variants: [
      variant({
        images: [{ url: 'https://cdn.example/a.jpg' }, { url: 'https://cdn.example/b.jpg', angle: 90 }],
      }),
    ],
  });
  const { batchId, errors } = await ingest(svc, token, [stored, { external_id: 'broken' }]);
  assert.equal(errors.length, 1);
  const externalId = stored.external_id as string;

  const reads: Array<[string, string, string]> = [
    ['/products/ingestions/{batch_id}', `/products/ingestions/${batchId}`, ''],
    ['/products/ingestions/{batch_id}/errors', `/products/ingestions/${batchId}/errors`, ''],
    ['/products/ingestions', '/products/ingestions', ''],
    ['/products/{external_id}', `/products/${externalId}`, ''],
    ['/products', '/products', ''],
  ];
  for (const [path, url] of reads) {
    const res = await svc.request({ method: 'GET', url, token });
    assert.equal(res.statusCode, 200, res.body);
    assertMatches(path, 'get', 200, res.json());
  }

  const missing = await svc.request({ method: 'GET', url: '/products/nothing-here', token });
  assert.equal(missing.statusCode, 404);
  assertMatches('/products/{external_id}', 'get', 404, missing.json());
  const badLimit = await svc.request({ method: 'GET', url: '/products?limit=0', token });
  assert.equal(badLimit.statusCode, 400);
  assertMatches('/products', 'get', 400, badLimit.json());
});

void test('the documented schemas are not vacuous: a product of the wrong shape fails them', () => {
  const validate = documentedResponse('/products/{external_id}', 'get', 200);
  const stored: Record<string, unknown> = {
    ...product(),
    created_at: '2026-11-26T00:00:00.000Z',
    updated_at: '2026-11-26T00:00:00.000Z',
  };
  const variants = (stored.variants as Array<Record<string, unknown>>).map((v) => ({ ...v, images: [] }));
  assert.equal(validate({ ...stored, variants }), true, JSON.stringify(validate.errors));
  assert.equal(validate({ ...stored, variants, style: 'modern' }), false);
  assert.equal(
    validate({ ...stored, variants: [{ ...variants[0], images: [{ url: 'https://x.example/a' }] }] }),
    false,
  );
});
