import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertProblem, assertStatusRecord, fieldCodes, ingestAndRead } from '../helpers/assertions.ts';

/** Operation 3 (`GET /products/ingestions/{id}/errors`), 404s of operations 2–3, and the batch list. */

interface ErrorPage {
  data: Array<Record<string, unknown>>;
  next_cursor: string | null;
}

let svc: TestService;
before(async () => {
  svc = await startTestService({ WORKER_CHUNK_SIZE: '50' });
});
after(async () => {
  await svc?.stop();
});

const errorsUrl = (batchId: string, query = '') => `/products/ingestions/${batchId}/errors${query}`;

async function getPage(token: string, url: string): Promise<ErrorPage> {
  const res = await svc.request({ method: 'GET', url, token });
  assert.equal(res.statusCode, 200, res.body);
  const page = res.json<ErrorPage>();
  assert.deepEqual(Object.keys(page).sort(), ['data', 'next_cursor']);
  return page;
}

/** Walks a list with `limit`, returning every page. */
async function walk(token: string, base: string, limit: number): Promise<ErrorPage[]> {
  const pages: ErrorPage[] = [];
  let cursor: string | null = null;
  do {
    const sep = base.includes('?') ? '&' : '?';
    const query: string = `${sep}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const page = await getPage(token, `${base}${query}`);
    pages.push(page);
    cursor = page.next_cursor;
    assert.ok(pages.length <= 1000, 'the walk ends');
  } while (cursor !== null);
  return pages;
}

/** A batch of 40 items of which 23 are invalid (name is a number), at scattered indices. */
const FAILING = [0, 1, 3, 4, 6, 9, 10, 12, 15, 16, 18, 20, 21, 24, 25, 27, 30, 31, 33, 35, 36, 38, 39];

void describe('walking the errors of a batch', () => {
  let token: string;
  let batchId: string;
  let items: Array<Record<string, unknown>>;

  before(async () => {
    token = await svc.token(svc.tenant('walk'));
    items = Array.from({ length: 40 }, (_, n) => (FAILING.includes(n) ? product({ name: n }) : product()));
    const result = await ingestAndRead(svc, token, items);
    batchId = result.batchId;
    assert.equal(result.final.status, 'completed_with_errors');
    assert.deepEqual([result.final.received_count, result.final.upserted, result.final.failed], [40, 17, 23]);
  });

  void test('limit=5 yields every failed item exactly once, ascending, and null after the last page', async () => {
    const pages = await walk(token, errorsUrl(batchId), 5);
    assert.deepEqual(
      pages.map((p) => p.data.length),
      [5, 5, 5, 5, 3],
    );
    pages.slice(0, -1).forEach((p) => assert.equal(typeof p.next_cursor, 'string'));
    assert.equal(pages.at(-1)!.next_cursor, null);
    const records = pages.flatMap((p) => p.data);
    assert.deepEqual(
      records.map((r) => r.index),
      FAILING,
    );
    for (const record of records) {
      const item = items[record.index as number]!;
      assert.deepEqual(Object.keys(record).sort(), ['errors', 'external_id', 'index', 'sku']);
      assert.deepEqual(fieldCodes(record.errors), [{ field: 'name', code: 'invalid_type' }]);
      assert.equal(record.external_id, item.external_id);
      assert.equal(record.sku, (item.variants as Array<Record<string, unknown>>)[0]!.sku);
    }
  });

  void test('a page size that divides the count exactly still ends with null, without an empty page', async () => {
    const single = await walk(token, errorsUrl(batchId), 23);
    assert.deepEqual(
      single.map((p) => [p.data.length, p.next_cursor === null]),
      [[23, true]],
    );
    const two = await walk(token, errorsUrl(batchId), 22);
    assert.deepEqual(
      two.map((p) => [p.data.length, p.next_cursor === null]),
      [
        [22, false],
        [1, true],
      ],
    );
  });

  void test('every page size gives the same records in the same order', async () => {
    const all = (await walk(token, errorsUrl(batchId), 500)).flatMap((p) => p.data);
    for (const limit of [1, 7, 24]) {
      assert.deepEqual(
        (await walk(token, errorsUrl(batchId), limit)).flatMap((p) => p.data),
        all,
      );
    }
    assert.deepEqual(await getPage(token, errorsUrl(batchId)), { data: all, next_cursor: null });
  });

  /** `url` (the errors page with some query) is a 400 validation-error on `field` alone (with `code`). */
  async function assertRefusedOn(url: string, field: string, label: string, code?: string): Promise<void> {
    const body = assertProblem(await svc.request({ method: 'GET', url, token }), {
      slug: 'validation-error',
      instance: errorsUrl(batchId),
      errors: 'any',
    });
    const errors = fieldCodes(body.errors);
    assert.deepEqual(
      errors.map((e) => e.field),
      [field],
      label,
    );
    if (code) assert.equal(errors[0]!.code, code, label);
  }

  // Text Number() would read as an integer is not one either: limit is decimal digits.
  const badLimits: Array<[string, string]> = [
    ['0', 'out_of_range'],
    ['501', 'out_of_range'],
    ['-1', 'out_of_range'],
    ...['abc', '1.5', '', '0x10', '1e2', '5.0', '%2B5', '%205', '5%20'].map((t): [string, string] => [
      t,
      'invalid_type',
    ]),
  ];
  for (const [limit, code] of badLimits) {
    void test(`limit=${limit} is 400 validation-error, ${code} on field limit`, async () => {
      await assertRefusedOn(errorsUrl(batchId, `?limit=${limit}`), 'limit', limit, code);
    });
  }

  void test('an unknown query parameter is 400 on a field of its name', async () => {
    for (const name of ['page', 'offset', 'tenant_id']) {
      await assertRefusedOn(errorsUrl(batchId, `?${name}=1`), name, name);
    }
  });

  void test('a malformed cursor is 400 on field cursor', async () => {
    const garbage = ['not-a-cursor', '%%%', 'e30', Buffer.from('[1,2]').toString('base64url'), ''];
    for (const cursor of garbage) {
      await assertRefusedOn(errorsUrl(batchId, `?cursor=${encodeURIComponent(cursor)}`), 'cursor', cursor);
    }
  });

  void test('limit in decimal digits with a leading zero reads as the number', async () => {
    const page = await getPage(token, errorsUrl(batchId, '?limit=05'));
    assert.equal(page.data.length, 5);
    assert.equal(typeof page.next_cursor, 'string');
  });

  void test('a real cursor with anything added to it is 400 on field cursor', async () => {
    const real = (await getPage(token, errorsUrl(batchId, '?limit=1'))).next_cursor!;
    assert.equal((await getPage(token, errorsUrl(batchId, `?limit=1&cursor=${real}`))).data.length, 1);
    for (const cursor of [`${real}!!!`, `${real}==`, ` ${real}`, `${real}.`, `${real}A`]) {
      await assertRefusedOn(
        errorsUrl(batchId, `?limit=1&cursor=${encodeURIComponent(cursor)}`),
        'cursor',
        cursor,
      );
    }
  });

  void test('a hand-made cursor reads as a position only between -1 and the last item index, 999', async () => {
    const cursorOf = (position: number) =>
      Buffer.from(JSON.stringify([`errors:${batchId}`, position])).toString('base64url');
    // 2^31 used to reach PostgreSQL and come back as a 500 (integer out of range).
    for (const position of [-2, 1000, 2 ** 31, Number.MAX_SAFE_INTEGER, 1.5]) {
      await assertRefusedOn(errorsUrl(batchId, `?cursor=${cursorOf(position)}`), 'cursor', String(position));
    }
    assert.deepEqual(
      await getPage(token, errorsUrl(batchId, `?limit=5&cursor=${cursorOf(-1)}`)),
      await getPage(token, errorsUrl(batchId, '?limit=5')),
    );
    assert.deepEqual(await getPage(token, errorsUrl(batchId, `?cursor=${cursorOf(999)}`)), {
      data: [],
      next_cursor: null,
    });
  });

  void test('a cursor of another batch, or of another list, is 400 on field cursor', async () => {
    const other = await ingestAndRead(
      svc,
      token,
      Array.from({ length: 3 }, () => product({ name: 1 })),
    );
    const foreign = (await getPage(token, errorsUrl(other.batchId, '?limit=1'))).next_cursor;
    assert.equal(typeof foreign, 'string');
    const listCursor = (await getPage(token, '/products/ingestions?limit=1')).next_cursor;
    assert.equal(typeof listCursor, 'string');
    for (const cursor of [foreign!, listCursor!]) {
      await assertRefusedOn(
        errorsUrl(batchId, `?limit=5&cursor=${encodeURIComponent(cursor)}`),
        'cursor',
        cursor,
      );
    }
  });
});

void describe('walking while the batch runs', () => {
  void test('a walk started right after the 202 yields every failed item exactly once, ascending', async () => {
    const token = await svc.token(svc.tenant('live'));
    const items: Array<Record<string, unknown>> = Array.from({ length: 1000 }, () => product());
    const takenSku = (items[0]!.variants as Array<Record<string, unknown>>)[0]!.sku;
    // Failures of both kinds: schema errors (found when the batch is validated) and sku conflicts
    // (found when their chunk is written, later, and at lower indices than some schema errors).
    for (const n of [150, 600, 850]) items[n] = product({ variants: [variant({ sku: takenSku })] });
    for (const n of [300, 999]) items[n] = product({ name: n });
    const batchId = await svc.submit(token, items);

    const seen: number[] = [];
    let cursor: string | null = null;
    for (let polls = 0; ; polls++) {
      assert.ok(polls < 20_000, 'the walk ends');
      const query: string = `?limit=500${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = await getPage(token, errorsUrl(batchId, query));
      seen.push(...page.data.map((r) => r.index as number));
      if (page.next_cursor === null) break;
      cursor = page.next_cursor;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const final = await svc.waitForTerminal(token, batchId, 1);
    assert.equal(final.status, 'completed_with_errors', 'next_cursor is null only once the batch has ended');
    assert.deepEqual(seen, [150, 300, 600, 850, 999]);
  });
});

void describe('page sizes', () => {
  void test('the default limit is 500, and limit=500 is accepted', async () => {
    const token = await svc.token(svc.tenant('default-limit'));
    const { batchId, final } = await ingestAndRead(
      svc,
      token,
      Array.from({ length: 503 }, (_, n) => `item ${n}`),
    );
    assert.equal(final.status, 'failed');
    for (const url of [errorsUrl(batchId), errorsUrl(batchId, '?limit=500')]) {
      const first = await getPage(token, url);
      assert.equal(first.data.length, 500);
      assert.deepEqual(
        first.data.map((r) => r.index),
        Array.from({ length: 500 }, (_, n) => n),
      );
      assert.equal(typeof first.next_cursor, 'string');
      const sep = url.includes('?') ? '&' : '?';
      const second = await getPage(token, `${url}${sep}cursor=${encodeURIComponent(first.next_cursor!)}`);
      assert.deepEqual(
        second.data.map((r) => r.index),
        [500, 501, 502],
      );
      assert.equal(second.next_cursor, null);
    }
  });

  void test('a batch without failures has an empty errors page', async () => {
    const token = await svc.token(svc.tenant('clean'));
    const { batchId, final } = await ingestAndRead(svc, token, [product(), product()]);
    assert.equal(final.status, 'completed');
    assert.deepEqual(await getPage(token, errorsUrl(batchId)), { data: [], next_cursor: null });
    assert.deepEqual(await getPage(token, errorsUrl(batchId, '?limit=1')), { data: [], next_cursor: null });
  });
});

void describe('404 not-found for ids that are not the caller’s', () => {
  void test('unknown, malformed and other tenants’ ids answer 404 on status and errors alike', async () => {
    const owner = await svc.token(svc.tenant('owner'));
    const stranger = await svc.token(svc.tenant('stranger'));
    const { batchId } = await ingestAndRead(svc, owner, [product({ name: 1 })]);
    const cases: Array<[string, string]> = [
      [stranger, batchId],
      [owner, '01900000-0000-7000-8000-000000000000'],
      [owner, '00000000-0000-0000-0000-000000000000'],
      [owner, 'not-a-batch-id'],
      [owner, '12345'],
      [owner, `${batchId}x`],
      [owner, 'x'.repeat(300)],
    ];
    for (const [token, id] of cases) {
      for (const url of [`/products/ingestions/${id}`, `/products/ingestions/${id}/errors`]) {
        assertProblem(await svc.request({ method: 'GET', url, token }), { slug: 'not-found', instance: url });
      }
      // A bad query changes nothing: the id is resolved first, so a 400 cannot tell the ids apart.
      const url = `/products/ingestions/${id}/errors`;
      for (const query of ['?limit=0', '?limit=x', '?cursor=zzz', '?tenant_id=other']) {
        assertProblem(await svc.request({ method: 'GET', url: `${url}${query}`, token }), {
          slug: 'not-found',
          instance: url,
        });
      }
    }
    // The owner sees the batch, and gets the 400 for the same bad query.
    const url = `/products/ingestions/${batchId}/errors`;
    assert.equal((await svc.request({ method: 'GET', url, token: owner })).statusCode, 200);
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?tenant_id=other', 'tenant_id'],
    ]) {
      const body = assertProblem(await svc.request({ method: 'GET', url: `${url}${query}`, token: owner }), {
        slug: 'validation-error',
        instance: url,
        errors: 'any',
      });
      assert.deepEqual(
        fieldCodes(body.errors).map((e) => e.field),
        [field],
      );
    }
  });
});

void describe('GET /products/ingestions (the tenant’s batches)', () => {
  void test('newest first, filtered by status, and walked with limit and cursor', async () => {
    const token = await svc.token(svc.tenant('list'));
    const completed = await ingestAndRead(svc, token, [product()]);
    const withErrors = await ingestAndRead(svc, token, [product(), 'bad']);
    const failed = await ingestAndRead(svc, token, ['bad']);
    const completed2 = await ingestAndRead(svc, token, [product(), product()]);
    const failed2 = await ingestAndRead(svc, token, [product({ style: 'modern' })]);
    const newestFirst = [failed2, completed2, failed, withErrors, completed].map((b) => b.batchId);

    const all = await getPage(token, '/products/ingestions');
    assert.deepEqual(
      all.data.map((b) => b.batch_id),
      newestFirst,
    );
    assert.equal(all.next_cursor, null);
    all.data.forEach((record) => assertStatusRecord(record));
    assert.deepEqual(all.data[3], withErrors.final);

    const byStatus = async (status: string) =>
      (await getPage(token, `/products/ingestions?status=${status}`)).data.map((b) => b.batch_id);
    assert.deepEqual(await byStatus('completed'), [completed2.batchId, completed.batchId]);
    assert.deepEqual(await byStatus('completed_with_errors'), [withErrors.batchId]);
    assert.deepEqual(await byStatus('failed'), [failed2.batchId, failed.batchId]);
    assert.deepEqual(await byStatus('accepted'), []);

    const pages = await walk(token, '/products/ingestions', 2);
    assert.deepEqual(
      pages.map((p) => p.data.length),
      [2, 2, 1],
    );
    assert.deepEqual(
      pages.flatMap((p) => p.data.map((b) => b.batch_id)),
      newestFirst,
    );
    const failedPages = await walk(token, '/products/ingestions?status=failed', 1);
    assert.deepEqual(
      failedPages.map((p) => [p.data.map((b) => b.batch_id), p.next_cursor === null]),
      [
        [[failed2.batchId], false],
        [[failed.batchId], true],
      ],
    );
  });

  void test('a cursor holds only the tenant’s own last batch, not a count kept across tenants', async () => {
    const token = await svc.token(svc.tenant('list-private'));
    const otherToken = await svc.token(svc.tenant('list-private-other'));
    const oldest = await ingestAndRead(svc, token, [product()]);
    for (let n = 0; n < 3; n++) await ingestAndRead(svc, otherToken, [product()]);
    const middle = await ingestAndRead(svc, token, [product()]);
    await ingestAndRead(svc, token, [product()]);

    const first = await getPage(token, '/products/ingestions?limit=2');
    assert.equal(first.data[1]!.batch_id, middle.batchId);
    // Opaque to clients, but what it holds is the point here: the last listed batch's own
    // created_at and id. A number from a sequence all tenants share would tell this tenant how many
    // batches the others submitted.
    const decoded: unknown = JSON.parse(Buffer.from(first.next_cursor!, 'base64url').toString('utf8'));
    assert.deepEqual(decoded, ['batches', `${String(middle.final.created_at)} ${middle.batchId}`]);
    const second = await getPage(token, `/products/ingestions?limit=2&cursor=${first.next_cursor!}`);
    assert.deepEqual(
      second.data.map((b) => b.batch_id),
      [oldest.batchId],
    );
    assert.equal(second.next_cursor, null);
  });

  void test('batches submitted in the same millisecond are walked by id, each exactly once', async () => {
    const tenant = svc.tenant('list-ties');
    const token = await svc.token(tenant);
    const batches = [];
    for (let n = 0; n < 4; n++) batches.push(await ingestAndRead(svc, token, [product()]));
    // As if all four had come in the same millisecond (ids are UUIDv7: in submission order).
    await svc.service.db.query(
      `UPDATE batches SET created_at = '2026-11-26T09:00:00.000Z' WHERE tenant_id = $1`,
      [tenant],
    );
    const pages = await walk(token, '/products/ingestions', 1);
    assert.deepEqual(
      pages.map((p) => p.data.map((b) => [b.batch_id, b.created_at])),
      batches.reverse().map((b) => [[b.batchId, '2026-11-26T09:00:00.000Z']]),
    );
  });

  void test('a hand-made batch-list cursor that is not a position is 400 on cursor', async () => {
    const token = await svc.token(svc.tenant('list-forged'));
    const cursorOf = (position: unknown) =>
      Buffer.from(JSON.stringify(['batches', position])).toString('base64url');
    const id = '01937e4c-8a2b-7cde-8f01-23456789abcd';
    for (const position of [
      42,
      '',
      id,
      `2026-11-26T09:00:00.000Z`,
      `2026-11-26T09:00:00Z ${id}`,
      `2026-02-30T09:00:00.000Z ${id}`,
      `0000-01-01T00:00:00.000Z ${id}`,
      `1969-12-31T23:59:59.999Z ${id}`,
      `2026-11-26T09:00:00.000Z ${id} x`,
      `2026-11-26T09:00:00.000Z  ${id}`,
    ]) {
      const body = assertProblem(
        await svc.request({ method: 'GET', url: `/products/ingestions?cursor=${cursorOf(position)}`, token }),
        { slug: 'validation-error', instance: '/products/ingestions', errors: 'any' },
      );
      assert.deepEqual(
        fieldCodes(body.errors),
        [{ field: 'cursor', code: 'invalid_value' }],
        String(position),
      );
    }
    const wellFormed = await getPage(
      token,
      `/products/ingestions?cursor=${cursorOf(`2026-11-26T09:00:00.000Z ${id}`)}`,
    );
    assert.deepEqual(wellFormed, { data: [], next_cursor: null });
  });

  void test('a bad status, limit, cursor or unknown parameter is 400 naming it', async () => {
    const token = await svc.token(svc.tenant('list-bad'));
    const cases: Array<[string, string]> = [
      ['?status=done', 'status'],
      ['?status=Completed', 'status'],
      ['?limit=0', 'limit'],
      ['?limit=x', 'limit'],
      ['?cursor=zzz', 'cursor'],
      ['?tenant_id=other', 'tenant_id'],
    ];
    for (const [query, field] of cases) {
      const body = assertProblem(
        await svc.request({ method: 'GET', url: `/products/ingestions${query}`, token }),
        { slug: 'validation-error', instance: '/products/ingestions', errors: 'any' },
      );
      assert.deepEqual(
        fieldCodes(body.errors).map((e) => e.field),
        [field],
        query,
      );
    }
  });
});
