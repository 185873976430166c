import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { allProducts, assertProblem, ingest } from '../helpers/assertions.ts';
import { EXPORT_PATH, linesOf, requestExport } from './export-helpers.ts';

/** `GET /products/export` as NDJSON (docs/reference.md §11.4): negotiation, shape, prefix, order, tenants. */

const svc = testServiceForFile();

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** A product whose fields are all fixed, so its line can be written out in full. */
function fixedProduct(externalId: string, images?: unknown[]): Record<string, unknown> {
  return product({
    external_id: externalId,
    variants: [variant({ sku: `${externalId}-a`, ...(images ? { images } : {}) })],
  });
}

void test('NDJSON for application/x-ndjson, no Accept, */* and application/json alike', async () => {
  const token = await svc.token(svc.tenant('export-accept'));
  const items = [fixedProduct('b'), fixedProduct('a')];
  await ingest(svc, token, items);
  const expected = `${JSON.stringify(items[1])}\n${JSON.stringify(items[0])}\n`;
  for (const accept of [
    undefined,
    'application/x-ndjson',
    '*/*',
    'application/json',
    'application/*',
    'text/csv;q=0.1, application/x-ndjson;q=0.9',
    'text/html, application/json;q=0.5',
  ]) {
    const res = await requestExport(svc, token, { accept });
    assert.equal(res.statusCode, 200, `${accept}: ${res.body}`);
    assert.equal(res.headers['content-type'], 'application/x-ndjson', String(accept));
    assert.equal(res.headers.vary, 'accept');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="products.ndjson"');
    assert.equal(res.body, expected, String(accept));
  }
});

void test('406 not-acceptable for a type that is none of NDJSON, CSV and XLSX, naming what is available', async () => {
  const token = await svc.token(svc.tenant('export-406'));
  await ingest(svc, token, [fixedProduct('kept')]);
  const available = `application/x-ndjson (also for application/json), text/csv or ${XLSX}`;
  const cases: Array<[string, string]> = [
    ['image/png', `The export is available as ${available}; the Accept header allows none of them.`],
    [
      `application/x-ndjson;q=0, application/json;q=0, text/csv;q=0, ${XLSX};q=0, text/html`,
      `The export is available as ${available}; the Accept header allows none of them.`,
    ],
  ];
  for (const [accept, detail] of cases) {
    const res = await requestExport(svc, token, { accept });
    const problem = assertProblem(res, { slug: 'not-acceptable', instance: EXPORT_PATH });
    assert.equal(problem.detail, detail, accept);
    assert.equal(res.headers.vary, 'accept');
  }
  // Refusing the form leaves the catalog as it was.
  assert.deepEqual(
    (await allProducts(svc, token)).map((p) => p.external_id),
    ['kept'],
  );
  const page = await svc.request({ method: 'GET', url: '/problems/not-acceptable', token: null });
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<h1>406 Not acceptable<\/h1>/);
  assert.match(page.body, /application\/x-ndjson/);
});

void test('each line is an item in the ingest shape: no timestamps, angle only when stored, images only when any', async () => {
  const token = await svc.token(svc.tenant('export-shape'));
  const images = [
    { url: 'https://cdn.example/1.jpg', angle: 0 },
    { url: 'https://cdn.example/2.jpg', angle: null },
    { url: 'https://cdn.example/3.jpg' },
    { url: 'https://cdn.example/4.jpg', angle: 360 },
    { url: 'https://cdn.example/5.jpg', angle: 12.5 },
  ];
  const withImages = fixedProduct('shape-1', images);
  const withoutImages = product({
    external_id: 'shape-2',
    variants: [variant({ sku: 'shape-2-a', images: undefined }), variant({ sku: 'shape-2-b' })],
  });
  delete (withoutImages.variants as Array<Record<string, unknown>>)[0]!.images;
  await ingest(svc, token, [withImages, withoutImages]);
  // A stored angle cleared by a later `angle: null` is stored as null: omitted too.
  const cleared = fixedProduct('shape-1', [{ url: 'https://cdn.example/5.jpg', angle: null }]);
  await ingest(svc, token, [cleared]);

  const res = await requestExport(svc, token);
  const lines = linesOf(res);
  const [first, second] = res.body.split('\n');
  const expectedFirst = {
    ...withImages,
    variants: [
      {
        ...(withImages.variants as Array<Record<string, unknown>>)[0],
        images: [
          { url: 'https://cdn.example/1.jpg', angle: 0 },
          { url: 'https://cdn.example/2.jpg' },
          { url: 'https://cdn.example/3.jpg' },
          { url: 'https://cdn.example/4.jpg', angle: 360 },
          { url: 'https://cdn.example/5.jpg' },
        ],
      },
    ],
  };
  // Exact text: the spec's key order, no timestamps, no angle where none is stored.
  assert.equal(first, JSON.stringify(expectedFirst));
  assert.equal(second, JSON.stringify(withoutImages));
  assert.equal(lines.length, 2);
  for (const line of lines) {
    assert.deepEqual(Object.keys(line), [
      'external_id',
      'name',
      'description',
      'style',
      'type',
      'sub_type',
      'variants',
    ]);
  }

  // Each line is a valid item, and one that would change nothing stored.
  const preview = await svc.request({
    method: 'POST',
    url: '/products/ingestions/preview',
    token,
    json: { items: lines },
  });
  assert.equal(preview.statusCode, 200, preview.body);
  assert.deepEqual(preview.json<{ summary: unknown }>().summary, {
    create: 0,
    update: 0,
    unchanged: 2,
    invalid: 0,
  });
});

void test('prefix exports exactly the products whose external_id starts with it, ordered as GET /products', async () => {
  const token = await svc.token(svc.tenant('export-prefix'));
  // More than one page of the export's reads (500 products), with the prefix's run crossing pages.
  const ids = [
    ...Array.from({ length: 1001 }, (_, i) => `chair-${String(i).padStart(4, '0')}`),
    'chai',
    'Chair-3',
    'armchair-1',
    'chairs',
    'table-1',
  ];
  await ingest(
    svc,
    token,
    ids.slice(0, 1000).map((id) => fixedProduct(id)),
  );
  await ingest(
    svc,
    token,
    ids.slice(1000).map((id) => fixedProduct(id)),
  );

  const listed = (await allProducts(svc, token, 500)).map((p) => p.external_id);
  const exported = linesOf(await requestExport(svc, token)).map((line) => line.external_id);
  assert.equal(exported.length, ids.length);
  assert.deepEqual(exported, listed);
  assert.deepEqual(
    exported,
    [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
  );

  const byPrefix = async (prefix: string) =>
    linesOf(await requestExport(svc, token, { query: `?prefix=${encodeURIComponent(prefix)}` })).map(
      (line) => line.external_id,
    );
  assert.deepEqual(await byPrefix('chair-'), ids.slice(0, 1001));
  assert.deepEqual(await byPrefix('chair-05'), ids.slice(500, 600));
  assert.deepEqual(await byPrefix('chair'), [...ids.slice(0, 1001), 'chairs']);
  assert.deepEqual(await byPrefix('Chair'), ['Chair-3']);
  for (const none of ['aaa', 'chz', 'zzz', 'a\u0000']) {
    const res = await requestExport(svc, token, { query: `?prefix=${encodeURIComponent(none)}` });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '', none);
  }
});

void test('a tenant exports only its own products; an empty catalog is an empty file', async () => {
  const mine = await svc.token(svc.tenant('export-mine'));
  const theirs = await svc.token(svc.tenant('export-theirs'));
  const empty = await svc.token(svc.tenant('export-empty'));
  const own = product({ external_id: 'same-id', name: 'Mine' });
  const other = product({ external_id: 'same-id', name: 'Theirs' });
  await ingest(svc, mine, [own]);
  await ingest(svc, theirs, [other, product({ external_id: 'only-theirs' })]);

  assert.deepEqual(linesOf(await requestExport(svc, mine)), [own]);
  assert.deepEqual(
    linesOf(await requestExport(svc, theirs)).map((line) => [line.external_id, line.name]),
    [
      ['only-theirs', 'Linen sofa'],
      ['same-id', 'Theirs'],
    ],
  );
  const res = await requestExport(svc, empty);
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '');
});

void test('bad query is 400 naming the parameter; no token 401; without catalog:read 403', async () => {
  const token = await svc.token(svc.tenant('export-bad'));
  for (const [query, field] of [
    ['?prefix=', 'prefix'],
    [`?prefix=${'x'.repeat(256)}`, 'prefix'],
    ['?limit=10', 'limit'],
  ] as const) {
    const res = await requestExport(svc, token, { query });
    const problem = assertProblem(res, { slug: 'validation-error', instance: EXPORT_PATH, errors: 'any' });
    assert.deepEqual(
      (problem.errors as Array<{ field: string }>).map((e) => e.field),
      [field],
    );
  }
  const anonymous = await svc.request({ method: 'GET', url: EXPORT_PATH, token: null });
  assertProblem(anonymous, { slug: 'unauthorized', instance: EXPORT_PATH });
  const writer = await svc.token(svc.tenant('export-writer'), { scope: 'ingestions:write ingestions:read' });
  assertProblem(await requestExport(svc, writer), { slug: 'forbidden', instance: EXPORT_PATH });
});

void test('export is a reserved word after /products/: a product named export is read through the list', async () => {
  const token = await svc.token(svc.tenant('export-reserved'));
  const named = fixedProduct('export');
  await ingest(svc, token, [named]);
  // The path is the export, not the product…
  assert.deepEqual(linesOf(await requestExport(svc, token)), [named]);
  // …which the list finds by its id.
  const res = await svc.request({ method: 'GET', url: '/products?prefix=export&limit=1', token });
  assert.equal(res.statusCode, 200, res.body);
  const page = res.json<{ data: Array<Record<string, unknown>> }>();
  assert.deepEqual(
    page.data.map((p) => p.external_id),
    ['export'],
  );
});
