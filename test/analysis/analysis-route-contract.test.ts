/** The route's contract at its edges: the spec's error bodies, other body errors, the OpenAPI document. */
import { after, before, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { analysisRoutes } from '../../src/analysis/analysis.routes.ts';
import { createAnalysisService } from '../../src/analysis/analysis.service.ts';
import { KeySetUnavailableError } from '../../src/auth/remote-keys.ts';
import { createValidatorCompiler } from '../../src/http/validator-compiler.ts';
import {
  buildAnalysisApp,
  decodeForTests,
  fakeClassifier,
  mintToken,
  postAnalysis,
} from './analysis-helpers.ts';

const BAD_REQUEST = {
  statusCode: 400,
  message: 'No images provided or more than 10 images',
  error: 'Bad Request',
};
const UNAUTHORIZED = {
  statusCode: 401,
  message: 'Unauthorized - Invalid or missing authentication token',
  error: 'Unauthorized',
};
const PATH = '/analysis/stageability/multiple';
const PHOTO_URL = 'http://127.0.0.1:9/photo.jpg';

let app: FastifyInstance;
let token: string;

const service = () =>
  createAnalysisService({ classifier: fakeClassifier(), decode: decodeForTests, allowPrivateHosts: true });

before(async () => {
  app = await buildAnalysisApp(service());
  token = await mintToken();
});

after(() => app.close());

/** Posts `body`; `authorization: null` sends no Authorization header. */
async function post(body: unknown, authorization: string | null = `Bearer ${token}`) {
  return postAnalysis(app, body, authorization);
}

void test('400 with the spec body for every malformed imageUrls', async () => {
  const bodies: unknown[] = [
    {},
    { imageUrls: 'http://127.0.0.1/photo.jpg' },
    { imageUrls: [] },
    { imageUrls: Array.from({ length: 11 }, (_, i) => `http://127.0.0.1/${i}.jpg`) },
    { imageUrls: [1] },
    { imageUrls: ['http://127.0.0.1/a.jpg', null] },
    { imageUrls: [{ url: 'http://127.0.0.1/a.jpg' }] },
    { imageUrls: null },
    null,
    ['http://127.0.0.1/a.jpg'],
    'imageUrls',
  ];
  for (const body of bodies) {
    const response = await post(body);
    assert.equal(response.status, 400, JSON.stringify(body));
    assert.deepEqual(response.body, BAD_REQUEST, JSON.stringify(body));
    assert.match(String(response.headers['content-type']), /^application\/json/);
  }
});

void test('401 with the spec body for a missing or invalid token, before the body is judged', async () => {
  const other = await mintToken({ secret: 'another-secret-another-secret-another-secret' });
  const expired = await mintToken({ expiresInSeconds: -60 });
  const cases: Array<[string | null, string]> = [
    [null, 'Bearer'],
    ['Basic dXNlcjpwYXNz', 'Bearer'],
    ['Bearer', 'Bearer'],
    ['Bearer not.a.jwt', 'Bearer error="invalid_token"'],
    [`Bearer ${other}`, 'Bearer error="invalid_token"'],
    [`Bearer ${expired}`, 'Bearer error="invalid_token"'],
  ];
  for (const [authorization, challenge] of cases) {
    const response = await post({ imageUrls: [] }, authorization);
    assert.equal(response.status, 401, String(authorization));
    assert.deepEqual(response.body, UNAUTHORIZED, String(authorization));
    assert.equal(response.headers['www-authenticate'], challenge, String(authorization));
  }
});

void test('403 for a token without the analysis scope or without a tenant', async () => {
  const cases: Array<[string, string]> = [
    [
      await mintToken({ scope: 'ingestions:write catalog:read' }),
      'The token lacks the scope "analysis:run".',
    ],
    [await mintToken({ tenant: null }), 'The token names no tenant (claim "tenant_id").'],
    [await mintToken({ tenant: '' }), 'The token names no tenant (claim "tenant_id").'],
    // Longer than any stored key may be: refused on every route alike, this one stores nothing.
    [
      await mintToken({ tenant: 't'.repeat(256) }),
      'The token\'s tenant (claim "tenant_id") is not a usable tenant id.',
    ],
  ];
  for (const [forbidden, message] of cases) {
    const response = await post({ imageUrls: [PHOTO_URL] }, `Bearer ${forbidden}`);
    assert.equal(response.status, 403);
    assert.deepEqual(response.body, { statusCode: 403, message, error: 'Forbidden' });
  }
});

void test('503 in the analysis shape, with Retry-After, while the key set cannot be had', async () => {
  const unavailable = await buildAnalysisApp(
    service(),
    () => () => Promise.reject(new KeySetUnavailableError()),
  );
  try {
    const response = await unavailable.inject({
      method: 'POST',
      url: PATH,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: JSON.stringify({ imageUrls: [PHOTO_URL] }),
    });
    assert.equal(response.statusCode, 503);
    assert.equal(response.headers['retry-after'], '5');
    assert.deepEqual(response.json(), {
      statusCode: 503,
      message: 'Bearer tokens cannot be verified right now: the key set is unavailable. Try again shortly.',
      error: 'Service Unavailable',
    });
  } finally {
    await unavailable.close();
  }
});

void test('other body errors keep the analysis shape', async () => {
  const textBody = await app.inject({
    method: 'POST',
    url: PATH,
    headers: { 'content-type': 'text/plain', authorization: `Bearer ${token}` },
    payload: 'imageUrls=http://127.0.0.1/a.jpg',
  });
  assert.equal(textBody.statusCode, 415);
  assert.deepEqual(textBody.json(), {
    statusCode: 415,
    message: 'The request body must be application/json.',
    error: 'Unsupported Media Type',
  });
  const compressed = await app.inject({
    method: 'POST',
    url: PATH,
    headers: {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      authorization: `Bearer ${token}`,
    },
    payload: gzipSync(JSON.stringify({ imageUrls: [PHOTO_URL] })),
  });
  assert.equal(compressed.statusCode, 415);
  assert.equal(compressed.headers['accept-encoding'], 'identity');
  assert.deepEqual(compressed.json(), {
    statusCode: 415,
    message: 'Content-Encoding gzip is not accepted: send the body uncompressed.',
    error: 'Unsupported Media Type',
  });
});

/** The parts of an OpenAPI operation the test reads. */
interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
}
type Content = Record<string, { schema: SchemaNode }>;
interface Operation {
  requestBody: { content: Content };
  responses: Record<string, { content: Content; description: string; headers?: Record<string, unknown> }>;
}

void test('the route and its schemas appear in the OpenAPI document', async () => {
  const documented = Fastify();
  documented.setValidatorCompiler(createValidatorCompiler());
  await documented.register(swagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '0' } } });
  await documented.register(
    analysisRoutes({
      analysis: createAnalysisService({
        classifier: fakeClassifier(),
        decode: decodeForTests,
        allowPrivateHosts: true,
      }),
      authorize: () => async () => undefined,
    }),
  );
  await documented.ready();
  const operation = (documented.swagger() as unknown as { paths: Record<string, { post: Operation }> }).paths[
    PATH
  ]!.post;
  assert.deepEqual(operation.requestBody.content['application/json']!.schema.properties!.imageUrls, {
    type: 'array',
    items: { type: 'string', description: 'http(s) URL of a photo' },
    minItems: 1,
    maxItems: 10,
  });
  assert.deepEqual(Object.keys(operation.responses).sort(), [
    '200',
    '400',
    '401',
    '403',
    '413',
    '415',
    '429',
  ]);
  const success = operation.responses['200']!.content['application/json']!.schema;
  assert.deepEqual(Object.keys(success.properties!.images!.items!.properties!), [
    'isStageable',
    'roomType',
    'confidence',
    'details',
    'imageUrl',
  ]);
  const described = Object.entries(operation.responses).map(([status, response]) => [
    status,
    response.description,
    Object.keys(response.headers ?? {}),
  ]);
  assert.deepEqual(described, [
    ['200', 'One entry per URL, in request order, and a summary', []],
    ['400', 'imageUrls missing, not an array, empty, over 10 or not all strings; or malformed JSON', []],
    ['401', 'Missing or invalid bearer token', ['WWW-Authenticate']],
    ['403', 'Token without a tenant or without the required scope', []],
    ['413', 'Body too large', []],
    ['415', 'Body is not uncompressed application/json in UTF-8', []],
    [
      '429',
      'The analyzer’s queue, or this tenant’s share of it, is full; retry after Retry-After seconds',
      ['Retry-After'],
    ],
  ]);
  await documented.close();
});
