import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { errorShapes, product, variant } from '../helpers/catalog-fixtures.ts';
import {
  assertProblem,
  ISO_MS,
  allProducts,
  assertCounters,
  countersOf,
  getProduct,
  ingest,
  storedProduct,
  viewOf,
  withoutTimestamps,
  waitTerminal,
  type StatusRecord,
} from '../helpers/assertions.ts';

/** docs/reference.md §5 upsert rules and §9 catalog reads, through the API and the real worker. */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

const completed = (n: number) => ({
  status: 'completed',
  received_count: n,
  validated_ok: n,
  validated_failed: 0,
  upserted: n,
  failed: 0,
});

/** A variant without its `images` key (absent, not empty). */
function withoutImages(v: Record<string, unknown>): Record<string, unknown> {
  const { images: _images, ...rest } = v;
  return rest;
}

/** A fresh tenant and its token. */
async function freshTenant(): Promise<string> {
  return svc.token(svc.tenant('upsert'));
}

void describe('a new product', () => {
  void test('is stored exactly as sent: numbers, null and absent angles, variant and image order', async () => {
    const token = await freshTenant();
    const item = product({
      name: 'Écru bouclé sofa',
      description: '',
      style: 'Mid-Century Modern',
      type: 'Sofas & Loveseats',
      sub_type: 'Corner Sofa',
      variants: [
        variant({
          sku: 'sku-z',
          price: 1299.99,
          depth: 0.1,
          height: 0,
          width: 3.14159265358979,
          weight: 1e-7,
          images: [
            { url: 'https://cdn.example/z-3.jpg', angle: 360 },
            { url: 'https://cdn.example/z-1.jpg', angle: null },
            { url: 'https://cdn.example/z-2.jpg' },
            { url: 'https://cdn.example/z-0.jpg', angle: 12.5 },
          ],
        }),
        variant({ sku: 'sku-a', price: 0, brand: '', color: 'Walnut' }),
        withoutImages(variant({ sku: 'sku-m', price: 89.9 })),
      ],
    });
    const submittedAt = Date.now();
    const final = await ingest(svc, token, [item]);
    const afterTerminal = Date.now();
    assert.deepEqual(countersOf(final), completed(1));

    const stored = await storedProduct(svc, token, item.external_id as string);
    assert.deepEqual(withoutTimestamps(stored), viewOf(item));
    // The exact expectation, spelled out once, so viewOf itself is checked too.
    const variants = stored.variants as Array<Record<string, unknown>>;
    assert.deepEqual(
      variants.map((v) => [v.sku, v.price, v.images]),
      [
        [
          'sku-z',
          1299.99,
          [
            { url: 'https://cdn.example/z-3.jpg', angle: 360 },
            { url: 'https://cdn.example/z-1.jpg', angle: null },
            { url: 'https://cdn.example/z-2.jpg', angle: null },
            { url: 'https://cdn.example/z-0.jpg', angle: 12.5 },
          ],
        ],
        ['sku-a', 0, [{ url: 'https://cdn.example/sofa-front.jpg', angle: 0 }]],
        ['sku-m', 89.9, []],
      ],
    );
    assert.deepEqual(
      [variants[0]!.depth, variants[0]!.height, variants[0]!.width, variants[0]!.weight],
      [0.1, 0, 3.14159265358979, 1e-7],
    );
    const created = Date.parse(String(stored.created_at));
    assert.ok(
      created >= submittedAt - 2000 && created <= afterTerminal + 2000,
      `created_at ${String(stored.created_at)}`,
    );

    const list = await svc.request({ method: 'GET', url: '/products', token });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json(), { data: [stored], next_cursor: null });
  });
});

void describe('an existing product', () => {
  void test('gets the incoming value of every field sent; created_at stays, updated_at moves on', async () => {
    const token = await freshTenant();
    const first = product();
    await ingest(svc, token, [first]);
    const original = await storedProduct(svc, token, first.external_id as string);

    const sku = (first.variants as Array<Record<string, unknown>>)[0]!.sku;
    const second = {
      external_id: first.external_id,
      name: 'Renamed sofa',
      description: 'Now in velvet',
      style: 'Industrial',
      type: 'Chairs',
      sub_type: 'Armchair',
      variants: [
        {
          sku,
          name: 'Moss velvet',
          item_url: 'https://shop.example/armchair?v=2',
          depth: 70.25,
          height: 0.1,
          width: 80,
          weight: 12.75,
          color: 'Green',
          price: 499.5,
          brand: 'Southwind',
        },
      ],
    };
    assert.deepEqual(countersOf(await ingest(svc, token, [second])), completed(1));
    const updated = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual(withoutTimestamps(updated), {
      ...second,
      variants: [
        { ...second.variants[0], images: [{ url: 'https://cdn.example/sofa-front.jpg', angle: 0 }] },
      ],
    });
    assert.equal(updated.created_at, original.created_at);
    assert.ok(
      String(updated.updated_at) > String(original.updated_at),
      `${String(original.updated_at)} -> ${String(updated.updated_at)}`,
    );
  });

  void test('keeps stored variants that are not in the request, unchanged and in creation order', async () => {
    const token = await freshTenant();
    const a = variant({ sku: 'a', price: 10 });
    const b = variant({ sku: 'b', price: 20, images: [{ url: 'https://cdn.example/b.jpg', angle: 90 }] });
    const first = product({ variants: [a, b] });
    await ingest(svc, token, [first]);

    const newC = withoutImages(variant({ sku: 'c', price: 30 }));
    const changedA = { ...a, price: 11, name: 'Changed' };
    await ingest(svc, token, [{ ...first, variants: [newC, changedA] }]);

    const stored = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual(withoutTimestamps(stored), viewOf({ ...first, variants: [changedA, b, newC] }));
  });
});

void describe('images of a variant', () => {
  const url = (n: number) => `https://cdn.example/img-${n}.jpg`;

  void test('absent: the stored images stay unchanged', async () => {
    const token = await freshTenant();
    const v = variant({
      images: [
        { url: url(1), angle: 10 },
        { url: url(2), angle: null },
      ],
    });
    const first = product({ variants: [v] });
    await ingest(svc, token, [first]);
    const noImages = withoutImages(v);
    await ingest(svc, token, [{ ...first, variants: [{ ...noImages, price: 1 }] }]);
    const stored = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual((stored.variants as Array<Record<string, unknown>>)[0], {
      ...noImages,
      price: 1,
      images: [
        { url: url(1), angle: 10 },
        { url: url(2), angle: null },
      ],
    });
  });

  void test('present: merged by url — new appended in order, known updated, unsent kept, absent angle kept', async () => {
    const token = await freshTenant();
    const v = variant({
      images: [
        { url: url(1), angle: 10 },
        { url: url(2), angle: 20 },
        { url: url(3), angle: 30 },
      ],
    });
    const first = product({ variants: [v] });
    await ingest(svc, token, [first]);
    const incoming = [
      { url: url(5), angle: 50 },
      { url: url(2), angle: 25 },
      { url: url(4) },
      { url: url(1) },
      { url: url(6), angle: null },
    ];
    await ingest(svc, token, [{ ...first, variants: [{ ...v, images: incoming }] }]);
    const stored = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual((stored.variants as Array<Record<string, unknown>>)[0]!.images, [
      { url: url(1), angle: 10 },
      { url: url(2), angle: 25 },
      { url: url(3), angle: 30 },
      { url: url(5), angle: 50 },
      { url: url(4), angle: null },
      { url: url(6), angle: null },
    ]);
  });

  void test('several items of one batch patch a variant one after another, on top of what is stored', async () => {
    const token = await freshTenant();
    const v = variant({ images: [{ url: url(1), angle: 5 }] });
    const first = product({ variants: [v] });
    await ingest(svc, token, [first]);
    // One batch, one chunk: the three patches are folded together, then merged into the stored images.
    await ingest(svc, token, [
      { ...first, variants: [{ ...v, images: [{ url: url(1) }] }] },
      { ...first, variants: [{ ...v, images: [{ url: url(1) }, { url: url(2) }] }] },
      {
        ...first,
        variants: [
          {
            ...v,
            images: [
              { url: url(3), angle: 30 },
              { url: url(2), angle: 20 },
            ],
          },
        ],
      },
    ]);
    const stored = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual((stored.variants as Array<Record<string, unknown>>)[0]!.images, [
      { url: url(1), angle: 5 },
      { url: url(2), angle: 20 },
      { url: url(3), angle: 30 },
    ]);
    // An image first sent without an angle reads as null, and takes one sent later.
    await ingest(svc, token, [{ ...first, variants: [{ ...v, images: [{ url: url(4) }] }] }]);
    await ingest(svc, token, [{ ...first, variants: [{ ...v, images: [{ url: url(4) }] }] }]);
    const before = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual((before.variants as Array<Record<string, unknown>>)[0]!.images, [
      { url: url(1), angle: 5 },
      { url: url(2), angle: 20 },
      { url: url(3), angle: 30 },
      { url: url(4), angle: null },
    ]);
    await ingest(svc, token, [{ ...first, variants: [{ ...v, images: [{ url: url(4), angle: 40 }] }] }]);
    const after = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual((after.variants as Array<Record<string, unknown>>)[0]!.images, [
      { url: url(1), angle: 5 },
      { url: url(2), angle: 20 },
      { url: url(3), angle: 30 },
      { url: url(4), angle: 40 },
    ]);
  });

  void test('angle: null on a known url clears the stored angle; 0 is a value, not an absence', async () => {
    const token = await freshTenant();
    const v = variant({
      images: [
        { url: url(1), angle: 10 },
        { url: url(2), angle: 20 },
      ],
    });
    const first = product({ variants: [v] });
    await ingest(svc, token, [first]);
    await ingest(svc, token, [
      {
        ...first,
        variants: [
          {
            ...v,
            images: [
              { url: url(2), angle: 0 },
              { url: url(1), angle: null },
            ],
          },
        ],
      },
    ]);
    const stored = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual((stored.variants as Array<Record<string, unknown>>)[0]!.images, [
      { url: url(1), angle: null },
      { url: url(2), angle: 0 },
    ]);
  });
});

void describe('order of application', () => {
  void test('the same external_id twice in one batch: the later item patches the earlier', async () => {
    const token = await freshTenant();
    const a = variant({ sku: 'a', images: [{ url: 'https://cdn.example/a1.jpg', angle: 45 }] });
    const first = product({ name: 'First name', variants: [a] });
    const b = variant({ sku: 'b', price: 5 });
    const second = {
      ...first,
      name: 'Second name',
      variants: [
        b,
        {
          ...a,
          images: [{ url: 'https://cdn.example/a2.jpg', angle: 90 }, { url: 'https://cdn.example/a1.jpg' }],
        },
      ],
    };
    const final = await ingest(svc, token, [first, second]);
    assert.deepEqual(countersOf(final), completed(2));
    const stored = await storedProduct(svc, token, first.external_id as string);
    assert.deepEqual(withoutTimestamps(stored), {
      ...viewOf(first),
      name: 'Second name',
      variants: [
        {
          ...a,
          images: [
            { url: 'https://cdn.example/a1.jpg', angle: 45 },
            { url: 'https://cdn.example/a2.jpg', angle: 90 },
          ],
        },
        { ...b, images: [{ url: 'https://cdn.example/sofa-front.jpg', angle: 0 }] },
      ],
    });
    assert.deepEqual(await allProducts(svc, token), [stored]);
  });

  void test('a later batch wins over an earlier one submitted back to back', async () => {
    const token = await freshTenant();
    const earlier = product({ name: 'Earlier' });
    const later = {
      ...earlier,
      name: 'Later',
      variants: [{ ...(earlier.variants as Array<Record<string, unknown>>)[0], price: 2, color: 'Navy' }],
    };
    // Enough items in the earlier batch that it is still running when the later one arrives.
    const filler = Array.from({ length: 300 }, () => product());
    const firstId = await svc.submit(token, [earlier, ...filler]);
    const secondId = await svc.submit(token, [later]);
    const [firstFinal, secondFinal] = [
      await waitTerminal(svc, token, firstId),
      await waitTerminal(svc, token, secondId),
    ];
    assert.deepEqual(countersOf(firstFinal), completed(301));
    assert.deepEqual(countersOf(secondFinal), completed(1));
    assert.ok(firstFinal.updated_at < secondFinal.updated_at, 'the later batch finished first');
    const stored = await storedProduct(svc, token, earlier.external_id as string);
    assert.deepEqual(withoutTimestamps(stored), viewOf(later));
  });

  void test('batches of one tenant apply in submission order: five prices, the last one stays', async () => {
    const token = await freshTenant();
    const base = product();
    const batches = [1, 2, 3, 4, 5].map((price) => [
      ...Array.from({ length: 40 }, () => product()),
      { ...base, variants: [{ ...(base.variants as Array<Record<string, unknown>>)[0], price }] },
    ]);
    const ids: string[] = [];
    for (const items of batches) ids.push(await svc.submit(token, items));
    const finals: StatusRecord[] = [];
    for (const id of ids) finals.push(await waitTerminal(svc, token, id));
    for (const final of finals) assert.deepEqual(countersOf(final), completed(41));
    const stored = await storedProduct(svc, token, base.external_id as string);
    assert.equal((stored.variants as Array<Record<string, unknown>>)[0]!.price, 5);
    assert.equal((await allProducts(svc, token)).length, 201);
  });
});

void describe('sku_conflict', () => {
  void test('an item using another product’s sku changes nothing, stored or earlier in the batch', async () => {
    const token = await freshTenant();
    const owner = product({ external_id: 'owner', variants: [variant({ sku: 'shared' })] });
    const other = product({ external_id: 'other', variants: [variant({ sku: 'other-sku' })] });
    await ingest(svc, token, [owner, other]);
    const ownerBefore = await storedProduct(svc, token, 'owner');
    const otherBefore = await storedProduct(svc, token, 'other');

    const items = [
      // An existing product that also claims the stored sku of another: rejected whole.
      {
        ...other,
        name: 'Must not be written',
        variants: [
          { ...(other.variants as Array<Record<string, unknown>>)[0], price: 1 },
          variant({ sku: 'shared' }),
        ],
      },
      // A new product with the stored sku of another.
      product({ external_id: 'thief', variants: [variant({ sku: 'shared', price: 2 })] }),
      // A sku first given to a product earlier in this batch.
      product({ external_id: 'first-new', variants: [variant({ sku: 'fresh' })] }),
      product({ external_id: 'second-new', variants: [variant({ sku: 'x' }), variant({ sku: 'fresh' })] }),
    ];
    const final = await ingest(svc, token, items);
    assertCounters(final, 'completed_with_errors', [4, 4, 0, 1, 3]);
    const errors = await svc.allErrors(token, final.batch_id);
    assert.deepEqual(
      errors.map((e) => ({
        index: e.index,
        external_id: e.external_id,
        sku: e.sku,
        errors: (e.errors as Array<Record<string, unknown>>).map(({ field, code }) => ({ field, code })),
      })),
      [
        {
          index: 0,
          external_id: 'other',
          sku: 'shared',
          errors: [{ field: 'variants[1].sku', code: 'sku_conflict' }],
        },
        {
          index: 1,
          external_id: 'thief',
          sku: 'shared',
          errors: [{ field: 'variants[0].sku', code: 'sku_conflict' }],
        },
        {
          index: 3,
          external_id: 'second-new',
          sku: 'fresh',
          errors: [{ field: 'variants[1].sku', code: 'sku_conflict' }],
        },
      ],
    );
    for (const e of errors) {
      for (const error of e.errors as Array<Record<string, unknown>>) {
        assert.equal(typeof error.message, 'string');
        assert.ok((error.message as string).length > 0);
      }
    }
    assert.deepEqual(await storedProduct(svc, token, 'owner'), ownerBefore);
    assert.deepEqual(await storedProduct(svc, token, 'other'), otherBefore);
    assert.equal((await getProduct(svc, token, 'thief')).statusCode, 404);
    assert.equal((await getProduct(svc, token, 'second-new')).statusCode, 404);
    assert.deepEqual(withoutTimestamps(await storedProduct(svc, token, 'first-new')), viewOf(items[2]!));
    assert.deepEqual(
      (await allProducts(svc, token)).map((p) => p.external_id),
      ['first-new', 'other', 'owner'],
    );
  });

  void test('an item claiming a stored sku and one given earlier in the batch gets both errors', async () => {
    // Found by test/property/catalog-upsert.test.ts: a chunk whose own merge rejected the item named
    // only the sku given earlier in the batch, not the stored one it also claimed.
    const token = await freshTenant();
    await ingest(svc, token, [product({ external_id: 'owner', variants: [variant({ sku: 'stored' })] })]);
    const final = await ingest(svc, token, [
      product({ external_id: 'first', variants: [variant({ sku: 'fresh' })] }),
      product({ external_id: 'late', variants: [variant({ sku: 'stored' }), variant({ sku: 'fresh' })] }),
    ]);
    assertCounters(final, 'completed_with_errors', [2, 2, 0, 1, 1]);
    assert.deepEqual(errorShapes(await svc.allErrors(token, final.batch_id)), [
      {
        index: 1,
        external_id: 'late',
        sku: 'stored',
        errors: [
          { field: 'variants[0].sku', code: 'sku_conflict' },
          { field: 'variants[1].sku', code: 'sku_conflict' },
        ],
      },
    ]);
    assert.equal((await getProduct(svc, token, 'late')).statusCode, 404);
  });
});

void describe('catalog reads', () => {
  void test('GET /products pages by external_id with limit and cursor; next_cursor null at the end', async () => {
    const token = await freshTenant();
    const ids = ['p-03', 'p-01', 'p-05', 'p-02', 'p-04'];
    await ingest(
      svc,
      token,
      ids.map((external_id) => product({ external_id })),
    );
    const pages: Array<{ ids: unknown[]; next: string | null }> = [];
    let cursor: string | null = null;
    do {
      const url: string = `/products?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await svc.request({ method: 'GET', url, token });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
      assert.deepEqual(Object.keys(page).sort(), ['data', 'next_cursor']);
      pages.push({ ids: page.data.map((p) => p.external_id), next: page.next_cursor });
      cursor = page.next_cursor;
      assert.ok(pages.length <= 3, 'more pages than products');
    } while (cursor);
    assert.deepEqual(
      pages.map((p) => p.ids),
      [['p-01', 'p-02'], ['p-03', 'p-04'], ['p-05']],
    );
    assert.equal(typeof pages[0]!.next, 'string');
    assert.equal(typeof pages[1]!.next, 'string');
    assert.equal(pages[2]!.next, null);

    const whole = await svc.request({ method: 'GET', url: '/products', token });
    const body = whole.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
    assert.deepEqual(
      body.data.map((p) => p.external_id),
      ['p-01', 'p-02', 'p-03', 'p-04', 'p-05'],
    );
    assert.equal(body.next_cursor, null);

    // Another tenant sees none of it.
    const stranger = await freshTenant();
    const empty = await svc.request({ method: 'GET', url: '/products', token: stranger });
    assert.deepEqual(empty.json(), { data: [], next_cursor: null });
    assert.equal((await getProduct(svc, stranger, 'p-01')).statusCode, 404);
  });

  void test('an unknown external_id answers 404 not-found as problem+json', async () => {
    const token = await freshTenant();
    const res = await svc.request({ method: 'GET', url: '/products/no-such-product', token });
    assert.equal(res.statusCode, 404);
    assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
    const problem = res.json<Record<string, unknown>>();
    assert.equal(problem.type, 'http://service.test/problems/not-found');
    assert.equal(problem.status, 404);
    assert.equal(problem.instance, '/products/no-such-product');
    assert.equal(typeof problem.title, 'string');
    assert.ok(
      Object.keys(problem).every((key) => ['type', 'title', 'status', 'detail', 'instance'].includes(key)),
      JSON.stringify(problem),
    );
  });

  void test('an external_id holding U+0000 is 404, and a cursor holding it is 400, not a database error', async () => {
    // PostgreSQL text cannot hold U+0000: no product has it in its key, and no query may be sent it.
    const token = await freshTenant();
    for (const url of ['/products/%00', '/products/p-01%00', '/products/%00%00']) {
      const res = await svc.request({ method: 'GET', url, token });
      assertProblem(res, { slug: 'not-found', instance: url });
    }
    const cursor = Buffer.from(JSON.stringify(['products', 'p\u0000'])).toString('base64url');
    const res = await svc.request({ method: 'GET', url: `/products?cursor=${cursor}`, token });
    assertProblem(res, {
      slug: 'validation-error',
      instance: '/products',
      errors: [{ field: 'cursor', code: 'invalid_value' }],
    });
    assert.deepEqual(res.json<{ errors: unknown }>().errors, [
      { field: 'cursor', code: 'invalid_value', message: 'cursor is not a next_cursor of this list.' },
    ]);
  });

  void test('an external_id with spaces, unicode and special characters round-trips', async () => {
    const token = await freshTenant();
    const ids = [
      "Sofa «Ünïcødé» 北京 #1 ?&=+%25 ~!*'()",
      ' leading and trailing spaces ',
      '😀 emoji; semi:colon, comma @ at',
      // The longest key the contract allows (255 characters), in multi-byte characters.
      '家'.repeat(255),
    ];
    const items = ids.map((external_id) => product({ external_id }));
    assert.deepEqual(countersOf(await ingest(svc, token, items)), completed(ids.length));
    for (const item of items) {
      const stored = await storedProduct(svc, token, item.external_id as string);
      assert.deepEqual(withoutTimestamps(stored), viewOf(item));
      assert.match(String(stored.created_at), ISO_MS);
    }
    const listed = await svc.request({ method: 'GET', url: '/products', token });
    const body = listed.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
    assert.deepEqual(body.data.map((p) => p.external_id).sort(), [...ids].sort());
    assert.equal(body.next_cursor, null);
  });

  void test('the next_cursor after the longest allowed external_id is accepted back', async () => {
    const token = await freshTenant();
    // 255 characters is the longest key the contract allows; the cursor that follows it must work.
    const ids = ['家'.repeat(255), '😀'.repeat(255), 'z'.repeat(255)];
    const final = await ingest(
      svc,
      token,
      ids.map((external_id) => product({ external_id })),
    );
    assert.deepEqual(countersOf(final), completed(3));
    const listed = (await allProducts(svc, token, 1)).map((p) => p.external_id);
    assert.deepEqual([...listed].sort(), [...ids].sort());
  });
});
