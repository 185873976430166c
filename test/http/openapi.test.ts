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
import { FIELD_ERROR_CODES } from '../../src/validation/item-errors.ts';
import { ingestAndRead } from '../helpers/assertions.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

let svc: TestService;
let document: OpenApiDocument;

/** A documented header: its schema, and what it means. */
interface HeaderObject {
  description?: string;
  schema?: { type?: string };
}
interface ResponseObject {
  description: string;
  headers?: Record<string, HeaderObject>;
}
interface Operation {
  parameters?: Array<{ in: string; name: string; required?: boolean; schema?: unknown }>;
  responses: Record<string, ResponseObject>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
}

before(async () => {
  svc = await startTestService();
  const res = await svc.request({ method: 'GET', url: '/openapi.json', token: null });
  assert.equal(res.statusCode, 200);
  document = res.json<OpenApiDocument>();
});
after(() => svc.stop());

/** Every documented response, keyed `METHOD path status`. */
function allResponses(): Array<[string, ResponseObject]> {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, operation]) =>
      Object.entries(operation.responses).map(
        ([status, response]) =>
          [`${method.toUpperCase()} ${path} ${status}`, response] as [string, ResponseObject],
      ),
    ),
  );
}

/** The names of the headers documented on `method path status`, sorted. */
function headersOf(path: string, method: string, status: string): string[] {
  return Object.keys(document.paths[path]![method]!.responses[status]!.headers ?? {}).sort();
}

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
  const response = document.paths[path]![method]!.responses['200'] as unknown as {
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
    'GET /': ['200', '302'],
    'POST /products/ingestions': ['202', '400', '401', '403', '413', '415', '422', '429', 'default'],
    'POST /products/ingestions/preview': ['200', '400', '401', '403', '413', '415', '429', 'default'],
    'GET /products/ingestions': ['200', '400', '401', '403', 'default'],
    'GET /products/ingestions/{batch_id}': ['200', '401', '403', '404', 'default'],
    'GET /products/ingestions/{batch_id}/errors': ['200', '400', '401', '403', '404', 'default'],
    'GET /products/ingestions/{batch_id}/errors/summary': ['200', '401', '403', '404', 'default'],
    'GET /products': ['200', '400', '401', '403', 'default'],
    'GET /products/export': ['200', '400', '401', '403', '406', '422', 'default'],
    'GET /products/{external_id}': ['200', '401', '403', '404', 'default'],
    'GET /products/{external_id}/history': ['200', '400', '401', '403', '404', 'default'],
    'DELETE /products/{external_id}': ['204', '401', '403', '404', 'default'],
    'DELETE /products/{external_id}/variants/{sku}': ['204', '401', '403', '404', '409', 'default'],
    'POST /webhook-endpoints': ['201', '400', '401', '403', '409', '415', 'default'],
    'GET /webhook-endpoints': ['200', '400', '401', '403', 'default'],
    'GET /webhook-endpoints/{id}': ['200', '401', '403', '404', 'default'],
    'DELETE /webhook-endpoints/{id}': ['204', '401', '403', '404', 'default'],
    'POST /webhook-endpoints/{id}/rotate-secret': ['200', '401', '403', '404', 'default'],
    'GET /webhook-endpoints/{id}/deliveries': ['200', '400', '401', '403', '404', 'default'],
    'POST /webhook-endpoints/{id}/deliveries/{delivery_id}/redeliver': [
      '202',
      '401',
      '403',
      '404',
      '409',
      'default',
    ],
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
  const { batchId, errors } = await ingestAndRead(svc, token, [stored, { external_id: 'broken' }]);
  assert.equal(errors.length, 1);
  const externalId = stored.external_id as string;

  const reads: Array<[string, string, string]> = [
    ['/products/ingestions/{batch_id}', `/products/ingestions/${batchId}`, ''],
    ['/products/ingestions/{batch_id}/errors', `/products/ingestions/${batchId}/errors`, ''],
    ['/products/ingestions/{batch_id}/errors/summary', `/products/ingestions/${batchId}/errors/summary`, ''],
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

void test('the errors route documents its CSV form beside its JSON page', () => {
  const ok = document.paths['/products/ingestions/{batch_id}/errors']!.get!.responses['200'] as unknown as {
    content: Record<string, { schema: { type?: string } }>;
  };
  assert.deepEqual(Object.keys(ok.content).sort(), ['application/json', 'text/csv']);
  assert.equal(ok.content['text/csv']!.schema.type, 'string');
});

void test('every response says what it means, and every documented header has a schema and a description', () => {
  const responses = allResponses();
  assert.deepEqual(
    responses.filter(([, response]) => response.description === 'Default Response').map(([key]) => key),
    [],
  );
  for (const [key, response] of responses) {
    assert.ok(response.description.length > 0, key);
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      assert.equal(typeof header.schema?.type, 'string', `${key} ${name}`);
      assert.ok((header.description ?? '').length > 0, `${key} ${name}`);
    }
  }
  const submit = document.paths['/products/ingestions']!.post!.responses;
  assert.equal(submit['202']!.description, 'Batch stored; processing continues asynchronously');
  assert.equal(
    document.paths['/products/ingestions/{batch_id}']!.get!.responses['404']!.description,
    'Not found: an unknown or malformed id, or another tenant’s',
  );
});

void test('a submission documents Location and RateLimit-* on its 202, and Retry-After and RateLimit-* on its 429', () => {
  const rateLimit = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
  assert.deepEqual(headersOf('/products/ingestions', 'post', '202'), [
    'Idempotent-Replayed',
    'Location',
    ...rateLimit,
    'X-Request-Id',
  ]);
  assert.deepEqual(headersOf('/products/ingestions', 'post', '429'), [
    ...rateLimit,
    'Retry-After',
    'X-Request-Id',
  ]);
  assert.deepEqual(
    document.paths['/products/ingestions']!.post!.responses['202']!.headers!.Location!.schema,
    {
      type: 'string',
      format: 'uri-reference',
    },
  );
});

void test('every 401 documents WWW-Authenticate', () => {
  const unauthorized = allResponses().filter(([key]) => key.endsWith(' 401'));
  // The six operations of docs/reference.md §4–§9, those of docs/reference.md §10 (preview, error summary, two deletes, seven webhook
  // operations), the export of docs/reference.md §11.4 and §11.3's product history.
  assert.equal(unauthorized.length, 10 + 7 + 1 + 1);
  for (const [key, response] of unauthorized) {
    assert.deepEqual(Object.keys(response.headers ?? {}).sort(), ['WWW-Authenticate', 'X-Request-Id'], key);
  }
});

void test('every response documents X-Request-Id, and every operation the optional X-Request-Id it echoes', () => {
  for (const [key, response] of allResponses()) {
    assert.ok(response.headers?.['X-Request-Id'], key);
  }
  assert.deepEqual(headersOf('/healthz', 'get', '200'), ['X-Request-Id']);
  assert.deepEqual(headersOf('/products/{external_id}', 'get', 'default'), ['X-Request-Id']);
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const sent = (operation.parameters ?? []).filter((parameter) => parameter.in === 'header');
      // The submission's own header (docs/reference.md §10.2), from the schema its route validates with.
      const own =
        path === '/products/ingestions' && method === 'post'
          ? [
              {
                name: 'Idempotency-Key',
                required: false,
                schema: { type: 'string', pattern: '^[\\x21-\\x7E]{1,255}$' },
              },
            ]
          : [];
      assert.deepEqual(
        sent.map(({ name, required, schema }) => ({ name, required, schema })),
        [
          ...own,
          {
            name: 'X-Request-Id',
            required: false,
            schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._~:@+=-]+$' },
          },
        ],
        `${method} ${path}`,
      );
    }
  }
});

void test('the headers the document promises are the headers the routes send', async () => {
  const token = await svc.token(svc.tenant());
  const promised = (path: string, method: string, status: string) =>
    headersOf(path, method, status).map((name) => name.toLowerCase());
  const sent = (headers: Record<string, unknown>) => Object.keys(headers);

  const submit = () =>
    svc.request({
      method: 'POST',
      url: '/products/ingestions',
      token,
      json: { items: [{}] },
      headers: { 'idempotency-key': 'promised-headers' },
    });
  const accepted = await submit();
  assert.equal(accepted.statusCode, 202);
  // Idempotent-Replayed is sent only on a replay, and there with every other header of the 202.
  const replayed = await submit();
  for (const name of promised('/products/ingestions', 'post', '202')) {
    if (name !== 'idempotent-replayed') assert.ok(sent(accepted.headers).includes(name), name);
    assert.ok(sent(replayed.headers).includes(name), name);
  }
  assert.equal(
    accepted.headers.location,
    `/products/ingestions/${accepted.json<{ batch_id: string }>().batch_id}`,
  );

  const unauthorized = await svc.request({ method: 'GET', url: '/products', token: null });
  assert.equal(unauthorized.statusCode, 401);
  for (const name of promised('/products', 'get', '401'))
    assert.ok(sent(unauthorized.headers).includes(name), name);

  const echoed = await svc.request({
    method: 'GET',
    url: '/healthz',
    token: null,
    headers: { 'x-request-id': 'trace-1.2:3' },
  });
  assert.equal(echoed.headers['x-request-id'], 'trace-1.2:3');
});

void test('every webhook answer matches its documented schema (docs/reference.md §10.1)', async () => {
  const token = await svc.token(svc.tenant());
  // Without WEBHOOK_ALLOW_PRIVATE_HOSTS: the delivery to this loopback address fails, saying why.
  const created = await svc.request({
    method: 'POST',
    url: '/webhook-endpoints',
    token,
    json: { url: 'https://127.0.0.1:9/hooks' },
  });
  assertMatches('/webhook-endpoints', 'post', 201, created.json());
  const { id } = created.json<{ id: string }>();
  const more = await Promise.all(
    Array.from({ length: 10 }, () =>
      svc.request({ method: 'POST', url: '/webhook-endpoints', token, json: { url: 'https://h.example/x' } }),
    ),
  );
  assertMatches('/webhook-endpoints', 'post', 409, more.find((res) => res.statusCode === 409)!.json());
  const bad = await svc.request({ method: 'POST', url: '/webhook-endpoints', token, json: { url: 1 } });
  assertMatches('/webhook-endpoints', 'post', 400, bad.json());
  const list = await svc.request({ method: 'GET', url: '/webhook-endpoints', token });
  assertMatches('/webhook-endpoints', 'get', 200, list.json());
  const one = await svc.request({ method: 'GET', url: `/webhook-endpoints/${id}`, token });
  assertMatches('/webhook-endpoints/{id}', 'get', 200, one.json());
  const rotated = await svc.request({ method: 'POST', url: `/webhook-endpoints/${id}/rotate-secret`, token });
  assertMatches('/webhook-endpoints/{id}/rotate-secret', 'post', 200, rotated.json());
  const missing = await svc.request({ method: 'GET', url: '/webhook-endpoints/nothing', token });
  assertMatches('/webhook-endpoints/{id}', 'get', 404, missing.json());

  const { batchId } = await ingestAndRead(svc, token, [product()]);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const log = await svc.request({ method: 'GET', url: `/webhook-endpoints/${id}/deliveries`, token });
    const [row] = log.json<{ data: Array<{ batch_id: string; attempts: number }> }>().data;
    if (row && row.attempts > 0) {
      assert.equal(row.batch_id, batchId);
      assertMatches('/webhook-endpoints/{id}/deliveries', 'get', 200, log.json());
      break;
    }
    assert.ok(Date.now() < deadline, `no attempt recorded: ${log.body}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
