/** Messages a person can act on (docs/reference.md §11.8): enumerations, 413, malformed JSON, 405. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { testServiceForFile } from '../helpers/test-service.ts';
import { assertNothingStored, assertProblem, previewItems } from '../helpers/assertions.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { createAnalysisService } from '../../src/analysis/analysis.service.ts';
import { createSafeFetch } from '../../src/analysis/safe-fetch.ts';
import { buildAnalysisApp, decodeForTests, fakeClassifier, mintToken } from '../analysis/analysis-helpers.ts';
import { csvItems } from '../spreadsheets/sheet-helpers.ts';
import { FURNITURE_COLORS, FURNITURE_SUB_TYPES } from '../../src/catalog/enums.ts';

const svc = testServiceForFile();

const EXACT = '(exact, case-sensitive)';
const STATUSES = '"accepted", "validating", "processing", "completed", "completed_with_errors", "failed"';
const EVENTS = '"batch.completed", "batch.completed_with_errors", "batch.failed"';
const STYLES =
  '"Contemporary", "Bohemian", "Transitional", "Industrial", "Mid-Century Modern", "Rustic", ' +
  '"Mid-Century", "Coastal", "Eclectic", "Traditional", "Modern"';
const TYPES =
  '"Sofas & Loveseats", "Chairs", "Stools & Benches", "Ottomans & Poufs", "Tables", "Storage & Display", ' +
  '"Bed Frames & Daybeds", "Mattresses & Bedding", "Lighting", "Rugs & Textiles", ' +
  '"Decorative Accessories", "Furniture Care"';
/** A long enumeration is named, with its count and the page of the service that lists its values. */
const COLORS =
  '31 FurnitureColor values (exact, case-sensitive, listed at /problems/validation-error#FurnitureColor)';
const SUB_TYPES =
  '139 FurnitureSubType values (exact, case-sensitive, listed at /problems/validation-error#FurnitureSubType)';

/** The errors[] of a 400 `validation-error`, asserted to be one. */
function fieldErrors(res: LightMyRequestResponse, instance: string): unknown {
  return assertProblem(res, { slug: 'validation-error', instance, errors: 'any' }).errors;
}

describe('a value outside an enumeration', () => {
  void test('of at most 12 values lists them all, with the closest, in a query parameter', async () => {
    const token = await svc.token(svc.tenant('enum-query'));
    const list = (status: string) =>
      svc.request({ method: 'GET', url: `/products/ingestions?status=${status}`, token });
    assert.deepEqual(fieldErrors(await list('bogus'), '/products/ingestions'), [
      {
        field: 'status',
        code: 'invalid_value',
        message: `status "bogus" is not one of the allowed values ${EXACT}: ${STATUSES}.`,
      },
    ]);
    assert.deepEqual(fieldErrors(await list('Completed'), '/products/ingestions'), [
      {
        field: 'status',
        code: 'invalid_value',
        message: `status "Completed" is not one of the allowed values ${EXACT}: ${STATUSES}; did you mean "completed"?`,
      },
    ]);
  });

  void test('in a search filter is named by its enumeration, as in a body', async () => {
    const token = await svc.token(svc.tenant('enum-search'));
    const search = (params: string) => svc.request({ method: 'GET', url: `/products?${params}`, token });
    assert.deepEqual(fieldErrors(await search('style=modern'), '/products'), [
      {
        field: 'style',
        code: 'invalid_value',
        message: `style "modern" is not one of the FurnitureStyle values ${EXACT}: ${STYLES}; did you mean "Modern"?`,
      },
    ]);
    assert.deepEqual(fieldErrors(await search('color=Gry'), '/products'), [
      {
        field: 'color',
        code: 'invalid_value',
        message: `color "Gry" is not one of the ${COLORS}; closest: "Gray", "Grey".`,
      },
    ]);
    assert.deepEqual(fieldErrors(await search('type=Tbles&sub_type=Anthracite'), '/products'), [
      {
        field: 'type',
        code: 'invalid_value',
        message: `type "Tbles" is not one of the FurnitureType values ${EXACT}: ${TYPES}; did you mean "Tables"?`,
      },
      {
        field: 'sub_type',
        code: 'invalid_value',
        message: `sub_type "Anthracite" is not one of the ${SUB_TYPES}.`,
      },
    ]);
  });

  void test('of at most 12 values lists them all in a body, and nothing is stored', async () => {
    const token = await svc.token(svc.tenant('enum-body'));
    const res = await svc.request({
      method: 'POST',
      url: '/webhook-endpoints',
      token,
      json: { url: 'https://hooks.example.com/catalog', events: ['batch.failed', 'batch.complete', 'done'] },
    });
    assert.deepEqual(fieldErrors(res, '/webhook-endpoints'), [
      {
        field: 'events[1]',
        code: 'invalid_value',
        message: `events[1] "batch.complete" is not one of the allowed values ${EXACT}: ${EVENTS}; did you mean "batch.completed"?`,
      },
      {
        field: 'events[2]',
        code: 'invalid_value',
        message: `events[2] "done" is not one of the allowed values ${EXACT}: ${EVENTS}.`,
      },
    ]);
    const endpoints = await svc.request({ method: 'GET', url: '/webhook-endpoints', token });
    assert.deepEqual(endpoints.json(), { data: [], next_cursor: null });
  });

  void test('of an item names a long enumeration and suggests up to 3 closest values', async () => {
    const token = await svc.token(svc.tenant('enum-item'));
    const items = [
      product({ style: 'Modrn', type: 'Table', variants: [variant({ color: 'Gren' })] }),
      product({
        sub_type: 'sectional',
        variants: [variant({ color: 'navy' }), variant({ color: 'Victorian' })],
      }),
    ];
    const answer = await previewItems<{ data: Array<{ errors: unknown }> }>(svc, token, items);
    assert.deepEqual(
      answer.data.map((entry) => entry.errors),
      [
        [
          {
            field: 'style',
            code: 'invalid_value',
            message: `style "Modrn" is not one of the FurnitureStyle values ${EXACT}: ${STYLES}; did you mean "Modern"?`,
          },
          {
            field: 'type',
            code: 'invalid_value',
            message: `type "Table" is not one of the FurnitureType values ${EXACT}: ${TYPES}; did you mean "Tables"?`,
          },
          {
            field: 'variants[0].color',
            code: 'invalid_value',
            message: `variants[0].color "Gren" is not one of the ${COLORS}; closest: "Grey", "Green".`,
          },
        ],
        [
          {
            field: 'sub_type',
            code: 'invalid_value',
            message: `sub_type "sectional" is not one of the ${SUB_TYPES}; closest: "Sectional", "Sectional Set", "Sectional Loveseat".`,
          },
          {
            field: 'variants[0].color',
            code: 'invalid_value',
            message: `variants[0].color "navy" is not one of the ${COLORS}; closest: "Navy".`,
          },
          {
            field: 'variants[1].color',
            code: 'invalid_value',
            message: `variants[1].color "Victorian" is not one of the ${COLORS}.`,
          },
        ],
      ],
    );
  });
});

describe('an enumeration error names the value sent (docs/reference.md §12.2)', () => {
  void test('in a spreadsheet cell, read by the converter the CLI and the dashboard share', async () => {
    const token = await svc.token(svc.tenant('enum-sheet'));
    const header =
      'external_id,name,description,style,type,sub_type,sku,variant_name,item_url,depth,height,width,weight,color,price,brand';
    const row = (id: string, color: string) =>
      `${id},Chair,d,Modern,Chairs,Armchair,${id}-1,v,https://shop.example/${id},1,2,3,4,${color},10,B`;
    const items = await csvItems(
      [header, row('sheet-1', 'Anthracite'), row('sheet-2', 'Charcol')].join('\r\n'),
    );
    const answer = await previewItems<{ data: Array<{ errors: unknown }> }>(svc, token, items);
    assert.deepEqual(
      answer.data.map((entry) => entry.errors),
      [
        [
          {
            field: 'variants[0].color',
            code: 'invalid_value',
            message: `variants[0].color "Anthracite" is not one of the ${COLORS}.`,
          },
        ],
        [
          {
            field: 'variants[0].color',
            code: 'invalid_value',
            message: `variants[0].color "Charcol" is not one of the ${COLORS}; closest: "Charcoal".`,
          },
        ],
      ],
    );
  });

  void test('in the worker, on the errors page: quotes escaped, a long value cut', async () => {
    const token = await svc.token(svc.tenant('enum-worker'));
    const sent = `"Grey" ${'x'.repeat(70)}`;
    const submitted = await svc.request({
      method: 'POST',
      url: '/products/ingestions',
      token,
      json: { items: [product({ style: 'Victorian', variants: [variant({ color: sent })] })] },
    });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const { batch_id: batchId } = submitted.json<{ batch_id: string }>();
    await svc.waitForTerminal(token, batchId);
    const errors = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}/errors`, token });
    const shown = `"\\"Grey\\" ${'x'.repeat(53)}…"`;
    assert.deepEqual(
      errors.json<{ data: Array<{ errors: unknown }> }>().data.map((record) => record.errors),
      [
        [
          {
            field: 'style',
            code: 'invalid_value',
            message: `style "Victorian" is not one of the FurnitureStyle values ${EXACT}: ${STYLES}.`,
          },
          {
            field: 'variants[0].color',
            code: 'invalid_value',
            message: `variants[0].color ${shown} is not one of the ${COLORS}.`,
          },
        ],
      ],
    );
  });

  void test('a long enumeration points at a page of the service that lists every value, without a token', async () => {
    const res = await svc.request({ method: 'GET', url: '/problems/validation-error', token: null });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    for (const [name, values] of [
      ['FurnitureColor', FURNITURE_COLORS],
      ['FurnitureSubType', FURNITURE_SUB_TYPES],
    ] as const) {
      const section = new RegExp(
        `<h3 id="${name}">${name}</h3><p>(\\d+) values, exact and case-sensitive:</p><ul>(.*?)</ul>`,
      ).exec(res.body);
      assert.ok(section, name);
      assert.equal(Number(section[1]), values.length);
      const listed = [...section[2]!.matchAll(/<li><code>(.*?)<\/code><\/li>/g)].map(
        ([, value]) => JSON.parse(value!.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as string,
      );
      assert.deepEqual(listed, [...values]);
    }
  });
});

describe('a body over the limit', () => {
  void test('of a submission is a 413 naming MAX_BODY_BYTES, and nothing is stored', async () => {
    const token = await svc.token(svc.tenant('too-large'));
    // The declared length is enough: the service refuses it before reading a byte of the body.
    const res = await svc.request({
      method: 'POST',
      url: '/products/ingestions',
      token,
      body: '{"items": []}',
      headers: { 'content-type': 'application/json', 'content-length': String(64 * 1024 * 1024 + 1) },
    });
    const problem = assertProblem(res, { slug: 'payload-too-large', instance: '/products/ingestions' });
    assert.equal(
      problem.detail,
      'The request body is larger than this operation accepts: at most 64 MiB (67108864 bytes).',
    );
    await assertNothingStored(svc, token);
  });

  void test('of another operation is a 413 naming its own limit', async () => {
    const token = await svc.token(svc.tenant('too-large-webhook'));
    const description = 'x'.repeat(1024 * 1024);
    const res = await svc.request({
      method: 'POST',
      url: '/webhook-endpoints',
      token,
      json: { url: 'https://hooks.example.com/catalog', description },
    });
    const problem = assertProblem(res, { slug: 'payload-too-large', instance: '/webhook-endpoints' });
    assert.equal(
      problem.detail,
      'The request body is larger than this operation accepts: at most 1 MiB (1048576 bytes).',
    );
    const endpoints = await svc.request({ method: 'GET', url: '/webhook-endpoints', token });
    assert.deepEqual(endpoints.json(), { data: [], next_cursor: null });
  });
});

describe('malformed JSON', () => {
  const cases: Array<[string, string, string]> = [
    [
      'a stray comma',
      '{\n  "items": [\n    {"a": 1},,\n  ]\n}',
      "unexpected character ',' at line 3, column 14",
    ],
    ['a body cut short', '{"items": [', 'it ends early, at line 1, column 12'],
    [
      'a bare word after a non-ASCII text',
      '{"items": ["café", x]}',
      "unexpected character 'x' at line 1, column 20",
    ],
    ['a tab inside a string', '{"items": ["a\tb"]}', 'unexpected character U+0009 at line 1, column 14'],
    ['a second value', '{"items": [1]}\r\n{}', "unexpected character '{' at line 2, column 1"],
  ];
  for (const [what, body, where] of cases) {
    void test(`names the line and column (1-based) of ${what}`, async () => {
      const token = await svc.token(svc.tenant('malformed'));
      for (const url of ['/products/ingestions', '/products/ingestions/preview', '/webhook-endpoints']) {
        const res = await svc.request({
          method: 'POST',
          url,
          token,
          body,
          headers: { 'content-type': 'application/json' },
        });
        const problem = assertProblem(res, { slug: 'malformed-json', instance: url });
        assert.equal(problem.detail, `The request body is not valid JSON: ${where}.`);
      }
      await assertNothingStored(svc, token);
    });
  }
});

describe('a body that is not UTF-8', () => {
  void test('is malformed-json naming the byte offset (0-based) of its first bad byte, on every JSON route; nothing is stored', async () => {
    const token = await svc.token(svc.tenant('not-utf8'));
    // "Café" as Windows-1252 writes it: é is the single byte 0xE9, after a line break and a UTF-8 "ü".
    const text = `{"items": [\n  {"external_id": "ü", "name": "CafX sofa"}]}`;
    const utf8 = Buffer.from(text);
    const at = utf8.indexOf('X');
    const body = Buffer.concat([utf8.subarray(0, at), Buffer.from([0xe9]), utf8.subarray(at + 1)]);
    for (const url of ['/products/ingestions', '/products/ingestions/preview', '/webhook-endpoints']) {
      const res = await svc.request({
        method: 'POST',
        url,
        token,
        body,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      const problem = assertProblem(res, { slug: 'malformed-json', instance: url });
      assert.equal(
        problem.detail,
        `The request body is not UTF-8: byte 0xE9 at byte offset ${at} (line 2, column 36) ` +
          'is not a UTF-8 character. Send JSON as UTF-8.',
      );
    }
    await assertNothingStored(svc, token);
  });
});

describe('a known path with a method it does not serve', () => {
  const cases: Array<[method: 'PUT' | 'DELETE' | 'PATCH' | 'POST' | 'GET', path: string, allow: string]> = [
    ['PUT', '/products/ingestions', 'GET, HEAD, POST, DELETE'],
    ['DELETE', '/products/ingestions/0190a1b2-0000-7000-8000-000000000000', 'GET, HEAD'],
    ['PUT', '/products/ingestions/preview', 'GET, HEAD, POST'],
    ['PATCH', '/products/some-sofa', 'GET, HEAD, DELETE'],
    ['POST', '/products/some-sofa/variants/sku-1', 'DELETE'],
    ['PUT', '/webhook-endpoints/any-id', 'GET, HEAD, DELETE'],
    ['GET', '/webhook-endpoints/any-id/rotate-secret', 'POST'],
    ['POST', '/healthz', 'GET, HEAD'],
    ['DELETE', '/openapi.json', 'GET, HEAD'],
  ];
  for (const [method, path, allow] of cases) {
    void test(`${method} ${path} is a 405 with Allow: ${allow}, before any token check`, async () => {
      const res = await svc.request({ method, url: `${path}?limit=1`, token: null });
      const problem = assertProblem(res, { slug: 'method-not-allowed', instance: path });
      assert.equal(res.headers.allow, allow);
      assert.equal(res.headers['www-authenticate'], undefined);
      assert.equal(problem.detail, `${path} does not serve ${method}; it serves ${allow}.`);
    });
  }

  void test('POST /products says where products are sent', async () => {
    const res = await svc.request({ method: 'POST', url: '/products', token: null, json: { items: [] } });
    const problem = assertProblem(res, { slug: 'method-not-allowed', instance: '/products' });
    assert.equal(res.headers.allow, 'GET, HEAD');
    assert.equal(
      problem.detail,
      '/products does not serve POST; it serves GET, HEAD. Products are sent in batches: POST /products/ingestions.',
    );
  });

  void test('is a 405 whatever its body, which is not read', async () => {
    for (const [body, type] of [
      ['{"items": [', 'application/json'],
      ['plain text', 'text/plain'],
    ]) {
      const res = await svc.request({
        method: 'PUT',
        url: '/products/ingestions',
        token: null,
        body,
        headers: { 'content-type': type! },
      });
      assertProblem(res, { slug: 'method-not-allowed', instance: '/products/ingestions' });
      assert.equal(res.headers.allow, 'GET, HEAD, POST, DELETE');
    }
  });

  void test('an unknown path stays a 404, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'PUT'] as const) {
      const res = await svc.request({ method, url: '/no-such-thing', token: null });
      assertProblem(res, { slug: 'not-found', instance: '/no-such-thing' });
      assert.equal(res.headers.allow, undefined);
    }
  });

  void test('has its problem page', async () => {
    const res = await svc.request({ method: 'GET', url: '/problems/method-not-allowed' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<h1>405 Method not allowed<\/h1>/);
    assert.match(res.body, /Allow header lists the methods it serves/);
  });
});

describe('under /analysis', () => {
  let app: FastifyInstance;
  before(async () => {
    // The analyzer's route registered after the error handler, as any route added later is.
    app = await buildAnalysisApp(
      createAnalysisService({
        classifier: fakeClassifier(),
        decode: decodeForTests,
        allowPrivateHosts: false,
        fetchImage: createSafeFetch({ allowPrivateHosts: false, timeoutMs: 1000 }),
      }),
    );
  });
  after(() => app.close());

  void test('a method the route does not serve is a 405 in the analysis shape, before the token', async () => {
    const path = '/analysis/stageability/multiple';
    for (const method of ['GET', 'PUT'] as const) {
      const res = await app.inject({ method, url: path });
      assert.equal(res.statusCode, 405);
      assert.equal(res.headers.allow, 'POST');
      assert.equal(res.headers['www-authenticate'], undefined);
      assert.deepEqual(res.json(), {
        statusCode: 405,
        message: `${path} does not serve ${method}; it serves POST.`,
        error: 'Method Not Allowed',
      });
    }
  });

  void test('a body over the limit is a 413 in the analysis shape, naming the limit', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/analysis/stageability/multiple',
      headers: {
        authorization: `Bearer ${await mintToken()}`,
        'content-type': 'application/json',
        'content-length': String(1024 * 1024 + 1),
      },
      payload: '{"imageUrls": []}',
    });
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), {
      statusCode: 413,
      message: 'The request body is larger than this operation accepts: at most 1 MiB (1048576 bytes).',
      error: 'Payload Too Large',
    });
  });
});
