import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testServicesForFile, type TestService } from '../helpers/test-service.ts';
import { bodyOverLimit, product, variant, withoutName, thief, skuOf } from '../helpers/catalog-fixtures.ts';
import { allProducts, assertProblem, getProduct, ingest } from '../helpers/assertions.ts';
import type { Database } from '../../src/db/database.ts';
import { createPreviewService } from '../../src/ingestion/preview.service.ts';
import { createRateLimiter } from '../../src/ingestion/rate-limiter.ts';
import { readAsJson, readAsRows } from '../../src/catalog/catalog-state.repository.ts';

/** docs/reference.md §10.3: `POST /products/ingestions/preview`, over HTTP against the real catalog. */

const PATH = '/products/ingestions/preview';
const [svc, limited, queued] = testServicesForFile([
  {},
  { RATE_LIMIT_PER_MINUTE: '3' },
  // No worker: batches stay queued, and the backlog only grows.
  { ROLE: 'api', MAX_PENDING_ITEMS: '2' },
]);

interface Entry {
  index: number;
  external_id: string | null;
  action: string;
  changes: string[];
  errors: Array<{ field: string; code: string; message: string }>;
}
interface Preview {
  received_count: number;
  summary: Record<string, number>;
  data: Entry[];
}

const preview = (s: TestService, token: string, items: unknown) =>
  s.request({ method: 'POST', url: PATH, token, json: { items } });

async function previewOk(s: TestService, token: string, items: unknown[]): Promise<Preview> {
  const res = await preview(s, token, items);
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Preview>();
}

const batchList = async (s: TestService, token: string) =>
  (await s.request({ method: 'GET', url: '/products/ingestions', token })).json<{ data: unknown[] }>().data;

const freshToken = (s: TestService = svc) => s.token(s.tenant('preview'));

/** The status a one-item submission answers with. */
const submitStatus = async (s: TestService, token: string) =>
  (await s.request({ method: 'POST', url: '/products/ingestions', token, json: { items: [product()] } }))
    .statusCode;

describe('preview: actions, changes and errors', () => {
  void test('create, update, unchanged and invalid, with nested change paths in request indices', async () => {
    const token = await freshToken();
    const images = [{ url: 'https://cdn.example/a.jpg', angle: 0 }, { url: 'https://cdn.example/b.jpg' }];
    const kept = variant({ images });
    const other = variant();
    const stored = product({ variants: [kept, other] });
    const same = product();
    assert.equal((await ingest(svc, token, [stored, same])).status, 'completed');

    const added = variant();
    const changed = {
      ...stored,
      name: 'Renamed',
      // The request's variants in another order: paths use the request's indices.
      variants: [
        added,
        { ...other, price: 1 },
        {
          ...kept,
          color: 'Blue',
          images: [
            { url: 'https://cdn.example/b.jpg', angle: 90 },
            { url: 'https://cdn.example/c.jpg' },
            // Known url, angle absent: the stored angle stays, nothing changes.
            { url: 'https://cdn.example/a.jpg' },
          ],
        },
      ],
    };
    const fresh = product();
    const body = [changed, same, fresh, withoutName(), 'not an item'];
    const result = await previewOk(svc, token, body);
    assert.deepEqual(result.summary, { create: 1, update: 1, unchanged: 1, invalid: 2 });
    assert.equal(result.received_count, 5);
    assert.deepEqual(
      result.data.map(({ index, external_id, action, changes }) => ({ index, external_id, action, changes })),
      [
        {
          index: 0,
          external_id: stored.external_id,
          action: 'update',
          changes: [
            'name',
            'variants[0]',
            'variants[1].price',
            'variants[2].color',
            'variants[2].images[0].angle',
            'variants[2].images[1]',
          ],
        },
        { index: 1, external_id: same.external_id, action: 'unchanged', changes: [] },
        { index: 2, external_id: fresh.external_id, action: 'create', changes: [] },
        {
          index: 3,
          external_id: (body[3] as { external_id: string }).external_id,
          action: 'invalid',
          changes: [],
        },
        { index: 4, external_id: null, action: 'invalid', changes: [] },
      ],
    );
    assert.deepEqual(result.data[0]!.errors, []);
    assert.deepEqual(result.data[3]!.errors, [
      { field: 'name', code: 'required', message: result.data[3]!.errors[0]!.message },
    ]);
    assert.deepEqual(
      result.data[4]!.errors.map(({ field, code }) => ({ field, code })),
      [{ field: '', code: 'invalid_type' }],
    );
  });

  void test('an angle set to null clears a stored angle; null where none is stored changes nothing', async () => {
    const token = await freshToken();
    const item = product({
      variants: [
        variant({
          images: [{ url: 'https://cdn.example/a.jpg', angle: 30 }, { url: 'https://cdn.example/b.jpg' }],
        }),
      ],
    });
    await ingest(svc, token, [item]);
    const v = (item.variants as Array<Record<string, unknown>>)[0]!;
    const again = {
      ...item,
      variants: [
        {
          ...v,
          images: [
            { url: 'https://cdn.example/b.jpg', angle: null },
            { url: 'https://cdn.example/a.jpg', angle: null },
          ],
        },
      ],
    };
    const result = await previewOk(svc, token, [again]);
    assert.deepEqual(result.data[0]!.changes, ['variants[0].images[1].angle']);
  });

  void test('numbers compare as stored: the same value written differently is unchanged', async () => {
    const token = await freshToken();
    const item = product({ variants: [variant({ price: 100, depth: 95.5 })] });
    await ingest(svc, token, [item]);
    const text = JSON.stringify({ items: [item] })
      .replace('"price":100', '"price":1e2')
      .replace('"depth":95.5', '"depth":95.50');
    const res = await svc.request({
      method: 'POST',
      url: PATH,
      token,
      body: text,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.ok(text.includes('1e2') && text.includes('95.50'));
    assert.equal(res.json<Preview>().data[0]!.action, 'unchanged');
  });

  void test('items apply in order: a later item with the same external_id sees the earlier one', async () => {
    const token = await freshToken();
    const first = product();
    const renamed = { ...first, name: 'Second name' };
    const result = await previewOk(svc, token, [first, renamed, renamed, first]);
    assert.deepEqual(
      result.data.map(({ action, changes }) => ({ action, changes })),
      [
        { action: 'create', changes: [] },
        { action: 'update', changes: ['name'] },
        { action: 'unchanged', changes: [] },
        { action: 'update', changes: ['name'] },
      ],
    );
  });

  void test('sku_conflict against a stored product and an earlier item, as the errors page lists it', async () => {
    const token = await freshToken();
    const owner = product();
    await ingest(svc, token, [owner]);
    const early = product();
    const body = [thief(skuOf(owner)), early, thief(skuOf(early)), { ...early, name: 'still its own sku' }];
    const result = await previewOk(svc, token, body);
    assert.deepEqual(
      result.data.map((entry) => entry.action),
      ['invalid', 'create', 'invalid', 'update'],
    );
    // What processing then records for the same body, word for word.
    const batchId = await svc.submit(token, body);
    await svc.waitForTerminal(token, batchId);
    const records = await svc.allErrors(token, batchId);
    assert.deepEqual(
      records.map((record) => ({ index: record.index, errors: record.errors })),
      result.data
        .filter((entry) => entry.action === 'invalid')
        .map(({ index, errors }) => ({ index, errors })),
    );
    assert.equal(result.data[0]!.errors[0]!.code, 'sku_conflict');
  });

  void test('an item whose skus an earlier item and a stored product own has both conflicts, in preview and batch', async () => {
    const token = await freshToken();
    const owner = product();
    await ingest(svc, token, [owner]);
    const early = product();
    const both = product({ variants: [variant({ sku: skuOf(early) }), variant({ sku: skuOf(owner) })] });
    const result = await previewOk(svc, token, [early, both]);
    const conflicts = [
      { field: 'variants[0].sku', code: 'sku_conflict' },
      { field: 'variants[1].sku', code: 'sku_conflict' },
    ];
    assert.deepEqual(
      result.data[1]!.errors.map(({ field, code }) => ({ field, code })),
      conflicts,
    );
    const batchId = await svc.submit(token, [early, both]);
    await svc.waitForTerminal(token, batchId);
    const records = await svc.allErrors(token, batchId);
    assert.deepEqual(
      records.map(({ index, errors }) => ({ index, errors })),
      [{ index: 1, errors: result.data[1]!.errors }],
    );
  });

  void test('an invalid item whose keys cannot be stored (NUL, a lone surrogate) is judged, not a 500', async () => {
    // The stored rows are read by the keys of every item, valid or not, while the items are validated.
    const token = await freshToken();
    const valid = product();
    const nul = product({ external_id: 'a\u0000b', variants: [variant({ sku: 'sku\u0000' })] });
    const surrogate = product({ external_id: 'x\ud800', variants: [variant({ sku: 'y\udc00' })] });
    const result = await previewOk(svc, token, [nul, valid, surrogate]);
    assert.deepEqual(result.summary, { create: 1, update: 0, unchanged: 0, invalid: 2 });
    assert.deepEqual(
      result.data.map(({ action, external_id }) => ({ action, external_id })),
      [
        { action: 'invalid', external_id: 'a\u0000b' },
        { action: 'create', external_id: valid.external_id },
        { action: 'invalid', external_id: 'x\ud800' },
      ],
    );
  });

  void test('every error of an invalid item, up to 50, exactly as the errors page has them', async () => {
    const token = await freshToken();
    const bad = product({
      name: 7,
      style: 'modern',
      variants: Array.from({ length: 30 }, () => variant({ price: -1, color: 'blue' })),
    });
    const result = await previewOk(svc, token, [bad]);
    assert.equal(result.data[0]!.errors.length, 50);
    const batchId = await svc.submit(token, [bad]);
    await svc.waitForTerminal(token, batchId);
    const [record] = await svc.allErrors(token, batchId);
    assert.deepEqual(result.data[0]!.errors, record!.errors);
  });
});

describe('preview: nothing is stored', () => {
  void test('the catalog and the batch list are unchanged', async () => {
    const token = await freshToken();
    const stored = product();
    await ingest(svc, token, [stored]);
    const catalogBefore = await allProducts(svc, token);
    const batchesBefore = await batchList(svc, token);
    const fresh = product();
    const result = await previewOk(svc, token, [{ ...stored, name: 'Changed' }, fresh]);
    assert.deepEqual(result.summary, { create: 1, update: 1, unchanged: 0, invalid: 0 });
    assert.deepEqual(await allProducts(svc, token), catalogBefore);
    assert.deepEqual(await batchList(svc, token), batchesBefore);
    assert.equal((await getProduct(svc, token, fresh.external_id as string)).statusCode, 404);
  });

  void test('it compares with the catalog as stored now: a batch still queued is not applied first', async () => {
    const token = await freshToken(queued);
    const item = product();
    await queued.submit(token, [item]);
    const result = await previewOk(queued, token, [item]);
    assert.equal(result.data[0]!.action, 'create');
  });

  void test('a full backlog does not refuse a preview, which adds no items', async () => {
    const token = await freshToken(queued);
    await queued.submit(token, [product(), product()]);
    assert.equal(await submitStatus(queued, token), 429);
    assert.equal((await preview(queued, token, [product()])).statusCode, 200);
  });
});

describe('preview: the body, limits and errors of a submission', () => {
  void test('envelope errors are 400 validation-error naming items or the property', async () => {
    const token = await freshToken();
    assertProblem(await preview(svc, token, []), {
      slug: 'validation-error',
      instance: PATH,
      errors: [{ field: 'items', code: 'too_few_items' }],
    });
    assertProblem(
      await svc.request({ method: 'POST', url: PATH, token, json: { items: [product()], extra: 1 } }),
      {
        slug: 'validation-error',
        instance: PATH,
        errors: [{ field: 'extra', code: 'unknown_field' }],
      },
    );
    assertProblem(
      await preview(
        svc,
        token,
        Array.from({ length: 1001 }, () => 1),
      ),
      {
        slug: 'validation-error',
        instance: PATH,
        errors: [{ field: 'items', code: 'too_many_items' }],
      },
    );
  });

  void test('malformed JSON is 400, another media type 415, a body over the limit 413', async () => {
    const token = await freshToken();
    const post = (body: string | Buffer, type = 'application/json') =>
      svc.request({ method: 'POST', url: PATH, token, body, headers: { 'content-type': type } });
    assertProblem(await post('{"items": ['), { slug: 'malformed-json', instance: PATH });
    assertProblem(await post('items=1', 'application/x-www-form-urlencoded'), {
      slug: 'unsupported-media-type',
      instance: PATH,
    });
    assertProblem(await post(bodyOverLimit()), { slug: 'payload-too-large', instance: PATH });
  });

  void test('scope ingestions:write is required', async () => {
    const token = await svc.token(svc.tenant(), { scope: 'ingestions:read' });
    assertProblem(await preview(svc, token, [product()]), { slug: 'forbidden', instance: PATH });
    assertProblem(await preview(svc, undefined as unknown as string, [product()]), {
      slug: 'unauthorized',
      instance: PATH,
    });
  });

  void test('it counts toward the submission rate limit', async () => {
    const token = await freshToken(limited);
    const into = Date.now() % 60_000;
    if (into > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 250));
    const first = await preview(limited, token, [product()]);
    assert.equal(first.statusCode, 200);
    assert.equal(first.headers['ratelimit-remaining'], '2');
    await limited.submit(token, [product()]);
    assert.equal((await preview(limited, token, [product()])).statusCode, 200);
    const refused = await preview(limited, token, [product()]);
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json<{ type: string }>().type, 'http://service.test/problems/rate-limited');
    assert.match(String(refused.headers['retry-after']), /^\d+$/);
    assert.equal(await submitStatus(limited, token), 429);
  });
});

void test('a preview reads the catalog in one statement, whatever the body', async () => {
  const statements: string[] = [];
  const db = svc.service.db;
  const counting = {
    kind: db.kind,
    query: (text: string, params?: readonly unknown[]) => {
      statements.push(text);
      return db.query(text, params);
    },
  } as Pick<Database, 'query' | 'kind'>;
  const service = createPreviewService({
    db: counting,
    rateLimiter: createRateLimiter(db, { perMinute: 100, maxPendingItems: 100 }),
  });
  const tenantId = svc.tenant();
  const stored = Array.from({ length: 20 }, () => product());
  await ingest(svc, await svc.token(tenantId), stored);
  const items = [
    ...stored,
    ...Array.from({ length: 980 }, () => product({ variants: [variant(), variant()] })),
  ];
  const result = await service.preview(tenantId, Buffer.from(JSON.stringify({ items })));
  assert.deepEqual(result.summary, { create: 980, update: 0, unchanged: 20, invalid: 0 });
  assert.equal(statements.length, 1, 'set-based, from one snapshot (docs/reference.md §10.3)');

  statements.length = 0;
  const few = await service.preview(tenantId, Buffer.from(JSON.stringify({ items: stored.slice(0, 3) })));
  assert.deepEqual(few.summary, { create: 0, update: 0, unchanged: 3, invalid: 0 });
  assert.equal(statements.length, 1, 'set-based, from one snapshot (docs/reference.md §10.3)');
});

void test('the catalog read gives the same rows in both forms (plain rows, one JSON text), awkward values and all', async () => {
  const tenantId = svc.tenant('read-forms');
  const stored = [
    product({
      external_id: 'forms-1',
      name: 'Ünïcode “quotes” \\ back\\slash',
      description: 'line one\nline two\t"quoted" \u2028 and emoji 🪑',
      variants: [
        variant({
          sku: 'forms-1-a',
          price: 0.30000000000000004,
          depth: 5e-324,
          height: 1.7976931348623157e308,
          width: 1e21,
          weight: 0,
          images: [{ url: 'https://cdn.example/a.jpg' }, { url: 'https://cdn.example/b.jpg', angle: 12.5 }],
        }),
        variant({ sku: 'forms-1-b', price: 123456789.123 }),
      ],
    }),
    product({ external_id: 'forms-2', variants: [variant({ sku: 'forms-2-a' })] }),
  ];
  const status = await ingest(svc, await svc.token(tenantId), stored);
  assert.equal(status.status, 'completed');
  // An image sent again with angle null: stored with null, beside one whose angle was never sent.
  await ingest(svc, await svc.token(tenantId), [
    {
      ...stored[0],
      variants: [
        {
          ...(stored[0]!.variants as object[])[0],
          images: [{ url: 'https://cdn.example/b.jpg', angle: null }],
        },
      ],
    },
  ]);
  const keys = {
    externalIds: ['forms-1', 'forms-2', 'absent'],
    skus: ['forms-1-a', 'forms-1-b', 'forms-2-a', 'absent-sku'],
  };
  const db = svc.service.db;
  const rows = await readAsRows(db, tenantId, keys);
  const json = await readAsJson(db, tenantId, keys);
  assert.deepEqual(rows, json);
  assert.deepEqual([...rows.products.keys()].sort(), ['forms-1', 'forms-2']);
  assert.deepEqual([...rows.variants.keys()].sort(), ['forms-1-a', 'forms-1-b', 'forms-2-a']);
  const a = rows.variants.get('forms-1-a')!;
  assert.deepEqual(
    [a.price, a.depth, a.height, a.width, a.weight],
    [0.30000000000000004, 5e-324, 1.7976931348623157e308, 1e21, 0],
  );
  assert.deepEqual(a.images, [
    { url: 'https://cdn.example/a.jpg' },
    { url: 'https://cdn.example/b.jpg', angle: null },
  ]);
  assert.equal(rows.products.get('forms-1')!.description, 'line one\nline two\t"quoted" \u2028 and emoji 🪑');
});
