import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertProblem, ISO_MS, storedProduct } from '../helpers/assertions.ts';
import { startSecondWorker } from '../helpers/second-worker.ts';

/** Product history (docs/reference.md §11.3), through the real API and worker. */

type Item = Record<string, unknown>;
interface Entry {
  at: string;
  action: string;
  batch_id: string | null;
  index: number | null;
  label?: string;
  diff: Array<Record<string, unknown>>;
}
interface HistoryPage {
  data: Entry[];
  next_cursor: string | null;
}

const svc = testServiceForFile();

const historyUrl = (externalId: string, query = '') =>
  `/products/${encodeURIComponent(externalId)}/history${query ? `?${query}` : ''}`;

async function history(token: string, externalId: string, query = ''): Promise<HistoryPage> {
  const res = await svc.request({ method: 'GET', url: historyUrl(externalId, query), token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<HistoryPage>();
}

/** Every entry of a product, newest first, walking the cursors with page size `limit`. */
async function allEntries(token: string, externalId: string, limit = 500): Promise<Entry[]> {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  do {
    const page: HistoryPage = await history(
      token,
      externalId,
      `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    entries.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return entries;
}

/** A product as `GET /products/{id}` shows it, without its timestamps: the shape a create's `add` holds. */
async function storedValue(token: string, externalId: string): Promise<Item> {
  const { created_at: _c, updated_at: _u, ...value } = await storedProduct(svc, token, externalId);
  return value;
}

async function submitAndWait(token: string, items: Item[]): Promise<string> {
  const batchId = await svc.submit(token, items);
  assert.equal((await svc.waitForTerminal(token, batchId)).status, 'completed');
  return batchId;
}

const lamp = (overrides: Item = {}, variantOverrides: Item = {}) =>
  product({
    external_id: 'lamp-1',
    name: 'Arc lamp',
    variants: [
      variant({
        sku: 'lamp-1-brass',
        price: 265,
        images: [{ url: 'https://cdn.example/lamp-front.jpg', angle: 0 }],
        ...variantOverrides,
      }),
    ],
    ...overrides,
  });

void describe('GET /products/{external_id}/history', () => {
  void test("an entry carries its batch's label when the batch has one, and none otherwise", async () => {
    const token = await svc.token(svc.tenant('hist-label'));
    const res = await svc.request({
      method: 'POST',
      url: `/products/ingestions?label=${encodeURIComponent('feed.csv 1/2')}`,
      token,
      json: { items: [lamp()] },
    });
    assert.equal(res.statusCode, 202, res.body);
    const labelled = res.json<{ batch_id: string }>().batch_id;
    assert.equal((await svc.waitForTerminal(token, labelled)).status, 'completed');
    const unlabelled = await submitAndWait(token, [lamp({ name: 'Arc lamp, brass' })]);
    const [update, create] = await allEntries(token, 'lamp-1');
    assert.equal(create!.batch_id, labelled);
    assert.equal(create!.label, 'feed.csv 1/2');
    assert.equal(update!.batch_id, unlabelled);
    assert.equal('label' in update!, false);
  });

  void test('a create records one add of the whole product at path "", as the product reads without timestamps', async () => {
    const token = await svc.token(svc.tenant('hist-create'));
    const batchId = await submitAndWait(token, [product(), lamp()]);

    const page = await history(token, 'lamp-1');
    assert.equal(page.next_cursor, null);
    assert.equal(page.data.length, 1);
    const [entry] = page.data;
    assert.match(entry!.at, ISO_MS);
    assert.deepEqual(entry, {
      at: entry!.at,
      action: 'create',
      batch_id: batchId,
      index: 1,
      diff: [{ path: '', op: 'add', to: await storedValue(token, 'lamp-1') }],
    });
    // Without an angle stored, the image reads `angle: null`, as GET /products/{id} shows it.
    assert.deepEqual((entry.diff[0]!.to as { variants: Item[] }).variants[0]!.images, [
      { url: 'https://cdn.example/lamp-front.jpg', angle: 0 },
    ]);
  });

  void test('an update records from → to with sku and url; an upsert that changes nothing records nothing', async () => {
    const token = await svc.token(svc.tenant('hist-update'));
    const first = await submitAndWait(token, [lamp()]);
    // The same item again changes nothing stored: no entry.
    await submitAndWait(token, [lamp()]);
    assert.equal((await history(token, 'lamp-1')).data.length, 1);

    const { images: _none, ...newVariant } = variant({ sku: 'lamp-1-black' });
    const brass = (lamp().variants as Item[])[0]!;
    const images = [
      { url: 'https://cdn.example/lamp-front.jpg', angle: null },
      { url: 'https://cdn.example/lamp-side.jpg' },
    ];
    const changed = {
      ...lamp({ name: 'Arc floor lamp' }),
      variants: [{ ...brass, price: 250, images }, newVariant],
    };
    const second = await submitAndWait(token, [changed]);

    const entries = await allEntries(token, 'lamp-1');
    assert.deepEqual(
      entries.map(({ action, batch_id, index }) => ({ action, batch_id, index })),
      [
        { action: 'update', batch_id: second, index: 0 },
        { action: 'create', batch_id: first, index: 0 },
      ],
    );
    assert.deepEqual(entries[0]!.diff, [
      { path: 'name', op: 'change', from: 'Arc lamp', to: 'Arc floor lamp' },
      { path: 'variants[0].price', op: 'change', sku: 'lamp-1-brass', from: 265, to: 250 },
      {
        path: 'variants[0].images[0].angle',
        op: 'change',
        sku: 'lamp-1-brass',
        url: 'https://cdn.example/lamp-front.jpg',
        from: 0,
        to: null,
      },
      {
        path: 'variants[0].images[1]',
        op: 'add',
        sku: 'lamp-1-brass',
        url: 'https://cdn.example/lamp-side.jpg',
        to: { url: 'https://cdn.example/lamp-side.jpg', angle: null },
      },
      {
        path: 'variants[1]',
        op: 'add',
        sku: 'lamp-1-black',
        to: { ...newVariant, images: [] },
      },
    ]);
  });

  void test('values holding the diffs’ separator (U+001E), other control characters, quotes and unicode are recorded exactly', async () => {
    // The insert joins a chunk's diffs with U+001E and splits them apart in SQL; a value that holds
    // one (JSON escapes it) must neither split an entry nor shift the next entries' diffs.
    const token = await svc.token(svc.tenant('hist-separator'));
    const awkward = 'rec\u001esep \u0001soh \u001fus "quoted" \\ back\nline ÄPPLARÖ 🛋️';
    const sofa = (overrides: Item = {}) =>
      product({ external_id: 'sofa-9', variants: [variant({ sku: 'sofa-9-oat' })], ...overrides });
    await submitAndWait(token, [lamp(), sofa()]);
    const batchId = await submitAndWait(token, [
      lamp({ description: awkward }),
      sofa({ name: `${awkward} sofa` }),
    ]);

    const [lampEntry] = (await history(token, 'lamp-1')).data;
    assert.deepEqual(lampEntry, {
      ...lampEntry,
      action: 'update',
      batch_id: batchId,
      index: 0,
      diff: [{ path: 'description', op: 'change', from: lamp().description, to: awkward }],
    });
    const [sofaEntry] = (await history(token, 'sofa-9')).data;
    assert.equal(sofaEntry!.index, 1);
    assert.deepEqual(sofaEntry!.diff, [
      { path: 'name', op: 'change', from: product().name, to: `${awkward} sofa` },
    ]);
  });

  void test('within one batch a later item’s entry is the newer one, and each diff is against the one before', async () => {
    const token = await svc.token(svc.tenant('hist-order'));
    const batchId = await submitAndWait(token, [
      lamp(),
      lamp({}, { price: 250 }),
      product(),
      lamp({}, { price: 240 }),
    ]);
    const entries = await allEntries(token, 'lamp-1', 1);
    assert.deepEqual(
      entries.map(({ action, batch_id, index, diff }) => ({
        action,
        batch_id,
        index,
        diff: action === 'create' ? [] : diff,
      })),
      [
        {
          action: 'update',
          batch_id: batchId,
          index: 3,
          diff: [{ path: 'variants[0].price', op: 'change', sku: 'lamp-1-brass', from: 250, to: 240 }],
        },
        {
          action: 'update',
          batch_id: batchId,
          index: 1,
          diff: [{ path: 'variants[0].price', op: 'change', sku: 'lamp-1-brass', from: 265, to: 250 }],
        },
        { action: 'create', batch_id: batchId, index: 0, diff: [] },
      ],
    );
  });

  void test('a 1000-item batch records an entry for every applied change and none for unchanged or failed items', async () => {
    const token = await svc.token(svc.tenant('hist-thousand'));
    const items = Array.from({ length: 1000 }, (_, i) =>
      product({ external_id: `p-${i}`, variants: [variant({ sku: `s-${i}`, price: 100 })] }),
    );
    const first = await submitAndWait(token, items);
    // Even items change their price, odd ones are sent unchanged, and item 999 fails validation.
    const again = items.map((item, i) =>
      i === 999
        ? { ...item, name: undefined, style: 'modern' }
        : i % 2 === 0
          ? { ...item, variants: [variant({ sku: `s-${i}`, price: 100 + i })] }
          : item,
    );
    const secondId = await svc.submit(token, again);
    const second = await svc.waitForTerminal(token, secondId);
    assert.equal(second.upserted, 999);
    assert.equal(second.failed, 1);

    for (let i = 0; i < 1000; i++) {
      const entries = await allEntries(token, `p-${i}`);
      const expected: Array<{ action: string; batch_id: string; index: number }> =
        i % 2 === 0 && i !== 0 ? [{ action: 'update', batch_id: secondId, index: i }] : [];
      expected.push({ action: 'create', batch_id: first, index: i });
      assert.deepEqual(
        entries.map(({ action, batch_id, index }) => ({ action, batch_id, index })),
        expected,
        `p-${i}`,
      );
      if (expected.length === 2) {
        assert.deepEqual(entries[0]!.diff, [
          { path: 'variants[0].price', op: 'change', sku: `s-${i}`, from: 100, to: 100 + i },
        ]);
      }
    }
  });

  void test('a deleted product keeps its history, a variant delete records a remove, a later create continues it', async () => {
    const token = await svc.token(svc.tenant('hist-delete'));
    const black = variant({ sku: 'lamp-1-black', images: [{ url: 'https://cdn.example/black.jpg' }] });
    const first = await submitAndWait(token, [
      { ...lamp(), variants: [...(lamp().variants as Item[]), black] },
    ]);
    const storedBlack = ((await storedValue(token, 'lamp-1')).variants as Item[])[1];
    assert.deepEqual(storedBlack, {
      ...black,
      images: [{ url: 'https://cdn.example/black.jpg', angle: null }],
    });

    const delVariant = await svc.request({
      method: 'DELETE',
      url: '/products/lamp-1/variants/lamp-1-black',
      token,
    });
    assert.equal(delVariant.statusCode, 204);
    const delProduct = await svc.request({ method: 'DELETE', url: '/products/lamp-1', token });
    assert.equal(delProduct.statusCode, 204);
    assert.equal((await svc.request({ method: 'GET', url: '/products/lamp-1', token })).statusCode, 404);

    const afterDelete = await allEntries(token, 'lamp-1');
    assert.deepEqual(
      afterDelete.slice(0, 2).map(({ at: _at, ...entry }) => entry),
      [
        { action: 'delete', batch_id: null, index: null, diff: [] },
        {
          action: 'update',
          batch_id: null,
          index: null,
          diff: [{ path: 'variants', op: 'remove', sku: 'lamp-1-black', from: storedBlack }],
        },
      ],
    );
    assert.equal(afterDelete[2]!.action, 'create');
    assert.equal(afterDelete.length, 3);

    const again = await submitAndWait(token, [lamp({}, { price: 199 })]);
    const continued = await allEntries(token, 'lamp-1');
    assert.deepEqual(
      continued.map(({ action, batch_id, index }) => ({ action, batch_id, index })),
      [
        { action: 'create', batch_id: again, index: 0 },
        { action: 'delete', batch_id: null, index: null },
        { action: 'update', batch_id: null, index: null },
        { action: 'create', batch_id: first, index: 0 },
      ],
    );
    assert.deepEqual(continued[0]!.diff, [{ path: '', op: 'add', to: await storedValue(token, 'lamp-1') }]);
  });

  void test('404 for a product never stored by this tenant; a stored product without entries is an empty page', async () => {
    const owner = await svc.token(svc.tenant('hist-owner'));
    const other = await svc.token(svc.tenant('hist-other'));
    await submitAndWait(owner, [lamp()]);
    for (const [token, id] of [
      [other, 'lamp-1'],
      [owner, 'never-stored'],
      [owner, 'nul\u0000id'],
    ] as const) {
      const url = historyUrl(id);
      assertProblem(await svc.request({ method: 'GET', url, token }), {
        slug: 'not-found',
        instance: url,
      });
    }
    // Entries past their retention are gone while the product stays.
    await svc.service.db.query(`DELETE FROM product_history WHERE external_id = 'lamp-1'`);
    assert.deepEqual(await history(owner, 'lamp-1'), { data: [], next_cursor: null });
  });

  void test('limit and cursor page newest first; bad limit, cursor or parameter are 400; catalog:read is needed', async () => {
    const tenant = svc.tenant('hist-pages');
    const token = await svc.token(tenant);
    await submitAndWait(
      token,
      [265, 260, 255, 250, 245].map((price) => lamp({}, { price })),
    );
    const all = await allEntries(token, 'lamp-1');
    assert.deepEqual(
      all.map(({ index }) => index),
      [4, 3, 2, 1, 0],
    );
    const first = await history(token, 'lamp-1', 'limit=2');
    assert.deepEqual(first.data, all.slice(0, 2));
    assert.equal(typeof first.next_cursor, 'string');
    const second = await history(token, 'lamp-1', `limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
    assert.deepEqual(second.data, all.slice(2, 4));
    const last = await history(token, 'lamp-1', `limit=2&cursor=${encodeURIComponent(second.next_cursor!)}`);
    assert.deepEqual(last, { data: all.slice(4), next_cursor: null });
    assert.equal((await history(token, 'lamp-1')).data.length, 5);

    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
      ['limit=x', 'limit'],
      ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
      ['since=yesterday', 'since'],
    ] as const) {
      const res = await svc.request({ method: 'GET', url: historyUrl('lamp-1', query), token });
      assert.equal(res.statusCode, 400, `${query}: ${res.body}`);
      assert.deepEqual(
        res.json<{ errors: Array<{ field: string }> }>().errors.map((e) => e.field),
        [field],
        query,
      );
    }
    const writer = await svc.token(tenant, { scope: 'ingestions:write catalog:write' });
    const forbidden = await svc.request({ method: 'GET', url: historyUrl('lamp-1'), token: writer });
    assertProblem(forbidden, { slug: 'forbidden', instance: historyUrl('lamp-1') });
  });

  void test('concurrent batches of two tenants with the same keys never mix their histories', async () => {
    const tokens = [await svc.token(svc.tenant('hist-a')), await svc.token(svc.tenant('hist-b'))];
    const batches = (price: number) =>
      Array.from({ length: 200 }, (_, i) =>
        product({ external_id: `same-${i}`, variants: [variant({ sku: `same-${i}`, price })] }),
      );
    const ids = await Promise.all(
      tokens.map(async (token, t) => {
        const created = await svc.submit(token, batches(10 + t));
        const updated = await svc.submit(token, batches(20 + t));
        return [created, updated] as const;
      }),
    );
    await Promise.all(tokens.flatMap((token, t) => ids[t]!.map((id) => svc.waitForTerminal(token, id))));
    for (const [t, token] of tokens.entries()) {
      for (const i of [0, 99, 199]) {
        const entries = await allEntries(token, `same-${i}`);
        assert.deepEqual(
          entries.map(({ action, batch_id }) => ({ action, batch_id })),
          [
            { action: 'update', batch_id: ids[t]![1] },
            { action: 'create', batch_id: ids[t]![0] },
          ],
        );
        assert.deepEqual(entries[0]!.diff, [
          { path: 'variants[0].price', op: 'change', sku: `same-${i}`, from: 10 + t, to: 20 + t },
        ]);
      }
    }
  });

  void test('the worker’s sweep deletes entries older than HISTORY_RETENTION_DAYS and keeps the others', async () => {
    const token = await svc.token(svc.tenant('hist-retention'));
    await submitAndWait(token, [lamp(), lamp({}, { price: 250 })]);
    const tenantRows = `external_id = 'lamp-1' AND tenant_id = (
      SELECT tenant_id FROM product_history WHERE external_id = 'lamp-1' ORDER BY at DESC LIMIT 1)`;
    // The create is 91 days old, the update 89.
    await svc.service.db.query(
      `UPDATE product_history SET at = now() - make_interval(days => CASE action WHEN 'create' THEN 91 ELSE 89 END)
       WHERE ${tenantRows}`,
    );
    const worker = await startSecondWorker(svc, { historyRetentionDays: 90 });
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      if ((await history(token, 'lamp-1')).data.length === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await worker.stop(5_000);
    assert.deepEqual(
      (await history(token, 'lamp-1')).data.map(({ action }) => action),
      ['update'],
    );
  });

  void test('the route is in /openapi.json with its query and its entry schema', async () => {
    const res = await svc.request({ method: 'GET', url: '/openapi.json' });
    const doc = res.json<{ paths: Record<string, { get?: { parameters: Array<{ name: string }> } }> }>();
    const get = doc.paths['/products/{external_id}/history']?.get;
    assert.ok(get, 'the history path is documented');
    assert.deepEqual(get.parameters.map((p) => p.name).sort(), [
      'X-Request-Id',
      'cursor',
      'external_id',
      'limit',
    ]);
  });
});
