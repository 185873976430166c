import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertProblem, ingest } from '../helpers/assertions.ts';

/** `GET /products?q=…&filters` (docs/reference.md §11.7): word matching, ranking, filters, total, pages. */

const svc = testServiceForFile();

type SearchPage = { data: Array<{ external_id: string }>; next_cursor: string | null; total?: number };

async function get(token: string, params: Record<string, string>) {
  const res = await svc.request({
    method: 'GET',
    url: `/products?${new URLSearchParams(params).toString()}`,
    token,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<SearchPage>();
}

/** The external ids a search finds, in order, walking every page; asserts `total` on each page. */
async function found(token: string, params: Record<string, string>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let total: number | undefined;
  do {
    const page = await get(token, { ...params, ...(cursor ? { cursor } : {}) });
    assert.deepEqual(Object.keys(page).sort(), ['data', 'next_cursor', 'total']);
    if (total !== undefined) assert.equal(page.total, total, 'total is the same on every page');
    total = page.total;
    ids.push(...page.data.map((p) => p.external_id));
    cursor = page.next_cursor;
    assert.ok(ids.length <= 50, 'more results than products');
  } while (cursor);
  assert.equal(total, ids.length, 'total counts every match');
  return ids;
}

/** Ingests `items` and asserts every one was stored. */
async function store(token: string, items: unknown[]): Promise<void> {
  const status = await ingest(svc, token, items);
  assert.equal(status.status, 'completed', JSON.stringify(status));
}

const item = (external_id: string, name: string, variants: Array<Record<string, unknown>>, rest = {}) =>
  product({ external_id, name, variants: variants.map((v) => variant(v)), ...rest });

void test('every word matches a word of name, external_id, brand or sku: accents, case, prefix, any order', async () => {
  const token = await svc.token(svc.tenant('search-words'));
  await store(token, [
    item('LMP-ARC-2044', 'Arc floor lamp', [{ sku: 'arc-black', brand: 'Lumen' }]),
    item('applaro-1', 'ÄPPLARÖ bench, outdoor', [{ sku: 'app-1', brand: 'IKEA' }]),
    item('chair-2', 'Applaro chair', [{ sku: 'app-2', brand: 'Ikéa' }]),
    item('billy-1', 'BILLY Bookcase, oak veneer', [{ sku: 'BIL-0001', brand: 'IKEA' }]),
    item('billy-2', 'Billy bookcase, white', [{ sku: 'BIL-0002', brand: 'IKEA' }]),
    item(
      'desc-only',
      'Plain stool',
      [{ sku: 'stool-1', brand: 'Nordic', name: 'billy oak', color: 'Brown' }],
      {
        description: 'billy oak applaro lamp',
      },
    ),
  ]);
  // Accent-insensitive both ways, and case-insensitive.
  assert.deepEqual((await found(token, { q: 'applaro' })).sort(), ['applaro-1', 'chair-2']);
  assert.deepEqual((await found(token, { q: 'ÄPPLARÖ' })).sort(), ['applaro-1', 'chair-2']);
  assert.deepEqual(await found(token, { q: 'ikea applaro bench' }), ['applaro-1']);
  assert.deepEqual(await found(token, { q: 'IKÉA CHAIR' }), ['chair-2']);
  // The last word is a prefix; the others are whole words.
  assert.deepEqual(await found(token, { q: 'billy oak' }), ['billy-1']);
  assert.deepEqual(await found(token, { q: 'billy o' }), ['billy-1']);
  assert.deepEqual(await found(token, { q: 'bill oak' }), []);
  assert.deepEqual(await found(token, { q: 'oak bookcases' }), [], 'a prefix longer than the word');
  assert.deepEqual(await found(token, { q: 'oak bil' }), ['billy-1'], 'any order');
  // A word is a run of letters and digits, in the text as in the fields.
  assert.deepEqual(await found(token, { q: 'LMP-ARC-2044' }), ['LMP-ARC-2044']);
  assert.deepEqual(await found(token, { q: '2044 lmp' }), ['LMP-ARC-2044']);
  assert.deepEqual(await found(token, { q: 'lmp arc 20' }), ['LMP-ARC-2044']);
  assert.deepEqual(await found(token, { q: 'lmparc' }), []);
  assert.deepEqual(await found(token, { q: 'bil 0002' }), ['billy-2'], 'sku words');
  assert.deepEqual(await found(token, { q: 'lumen' }), ['LMP-ARC-2044'], 'brand words');
  // Only the four fields: description, variant names and colors are not searched.
  assert.deepEqual(await found(token, { q: 'stool' }), ['desc-only']);
  assert.deepEqual(await found(token, { q: 'plain lamp' }), []);
  assert.deepEqual(await found(token, { q: 'brown' }), []);
  assert.deepEqual(await found(token, { q: 'billy oak veneer' }), ['billy-1']);
});

void test('most relevant first: a key or whole-word match before a prefix or brand match; pages stay exact', async () => {
  const token = await svc.token(svc.tenant('search-rank'));
  await store(token, [
    item('r-1', 'Oaken chest', [{ sku: 'r1', brand: 'Nordic' }]),
    item('r-2', 'Oak chest', [{ sku: 'r2', brand: 'Nordic' }]),
    item('r-3', 'Chest', [{ sku: 'r3', brand: 'Oak & Co' }]),
    item('oak', 'Chest', [{ sku: 'r4', brand: 'Nordic' }]),
    ...Array.from({ length: 7 }, (_, i) => item(`t-${i}`, 'Oak table', [{ sku: `t${i}`, brand: 'Nordic' }])),
  ]);
  const all = await found(token, { q: 'oak' });
  assert.deepEqual(all, ['oak', 'r-2', 't-0', 't-1', 't-2', 't-3', 't-4', 't-5', 't-6', 'r-1', 'r-3']);
  // Ties (the seven tables) are ordered by external_id, and every page size walks the same list.
  for (const limit of ['1', '2', '3', '4'])
    assert.deepEqual(await found(token, { q: 'oak', limit }), all, limit);
  const first = await get(token, { q: 'oak', limit: '3' });
  assert.equal(first.total, 11);
  // A cursor belongs to its search: another q or filter refuses it.
  const others: Array<Record<string, string>> = [
    { q: 'oak table' },
    { q: 'oak', type: 'Sofas & Loveseats' },
    {},
  ];
  for (const other of others) {
    const url = `/products?${new URLSearchParams({ ...other, cursor: first.next_cursor! }).toString()}`;
    const res = await svc.request({ method: 'GET', url, token });
    assertProblem(res, {
      slug: 'validation-error',
      instance: '/products',
      errors: [{ field: 'cursor', code: 'invalid_value' }],
    });
  }
});

void test('filters alone and with q: type, style, sub_type, and one variant satisfying color and prices', async () => {
  const token = await svc.token(svc.tenant('search-filters'));
  await store(token, [
    item('f-1', 'Linen sofa', [
      { sku: 'f1-a', color: 'Red', price: 100 },
      { sku: 'f1-b', color: 'Blue', price: 300 },
    ]),
    item('f-2', 'Linen chair', [{ sku: 'f2-a', color: 'Red', price: 300 }], {
      type: 'Chairs',
      sub_type: 'Armchair',
      style: 'Rustic',
    }),
    item('f-3', 'Velvet sofa', [{ sku: 'f3-a', color: 'Blue', price: 99.5 }]),
  ]);
  assert.deepEqual(await found(token, { color: 'Red' }), ['f-1', 'f-2']);
  assert.deepEqual(await found(token, { type: 'Chairs' }), ['f-2']);
  assert.deepEqual(await found(token, { style: 'Modern' }), ['f-1', 'f-3']);
  assert.deepEqual(await found(token, { sub_type: 'Armchair' }), ['f-2']);
  assert.deepEqual(await found(token, { q: 'sofa', style: 'Modern', sub_type: 'Sofa' }), ['f-1', 'f-3']);
  // Inclusive bounds.
  assert.deepEqual(await found(token, { min_price: '300' }), ['f-1', 'f-2']);
  assert.deepEqual(await found(token, { max_price: '99.5' }), ['f-3']);
  assert.deepEqual(await found(token, { min_price: '99.5', max_price: '100' }), ['f-1', 'f-3']);
  // One variant must satisfy every variant filter: f-1 has a red one and one at 300, not a red one at 300.
  assert.deepEqual(await found(token, { color: 'Red', min_price: '300' }), ['f-2']);
  assert.deepEqual(await found(token, { color: 'Blue', max_price: '200' }), ['f-3']);
  assert.deepEqual(await found(token, { q: 'linen', color: 'Blue' }), ['f-1']);
  assert.deepEqual(await found(token, { min_price: '301' }), []);
  assert.deepEqual(await found(token, { min_price: '300', max_price: '100' }), []);
});

void test('a color filter of Gray or Grey finds variants of either spelling, each stored as sent (docs/reference.md §12.2)', async () => {
  const token = await svc.token(svc.tenant('search-grey'));
  await store(token, [
    item('g-gray', 'Gray sofa', [{ sku: 'g1', color: 'Gray', price: 100 }]),
    item('g-grey', 'Grey sofa', [{ sku: 'g2', color: 'Grey', price: 300 }]),
    item('g-charcoal', 'Charcoal sofa', [{ sku: 'g3', color: 'Charcoal', price: 100 }]),
    item('g-both', 'Two-tone chair', [
      { sku: 'g4', color: 'Grey', price: 50 },
      { sku: 'g5', color: 'White', price: 500 },
    ]),
  ]);
  for (const color of ['Gray', 'Grey']) {
    const page = await get(token, { color });
    assert.equal(page.total, 3, color);
    assert.deepEqual(await found(token, { color }), ['g-both', 'g-gray', 'g-grey'], color);
    // One variant must still satisfy every variant filter, whatever its spelling.
    assert.deepEqual(await found(token, { color, min_price: '100' }), ['g-gray', 'g-grey'], color);
    assert.deepEqual(await found(token, { color, max_price: '60' }), ['g-both'], color);
    assert.deepEqual(await found(token, { q: 'sofa', color }), ['g-gray', 'g-grey'], color);
  }
  assert.deepEqual(await found(token, { color: 'Charcoal' }), ['g-charcoal']);
  assert.deepEqual(await found(token, { color: 'White' }), ['g-both']);
  const colors = async (id: string) =>
    (await svc.request({ method: 'GET', url: `/products/${id}`, token }))
      .json<{ variants: Array<{ color: string }> }>()
      .variants.map((v) => v.color);
  assert.deepEqual(await colors('g-gray'), ['Gray']);
  assert.deepEqual(await colors('g-grey'), ['Grey']);
  assert.deepEqual(await colors('g-both'), ['Grey', 'White']);
});

void test('an invalid filter value is a 400 naming the parameter', async () => {
  const token = await svc.token(svc.tenant('search-bad'));
  const cases: Array<[Record<string, string>, string]> = [
    [{ type: 'Sofa' }, 'type'],
    [{ style: 'modern' }, 'style'],
    [{ sub_type: 'Chairs' }, 'sub_type'],
    [{ color: 'red' }, 'color'],
    [{ min_price: 'cheap' }, 'min_price'],
    [{ max_price: '-1' }, 'max_price'],
    [{ min_price: '-0.5' }, 'min_price'],
    [{ q: 'x'.repeat(1001) }, 'q'],
  ];
  for (const [params, field] of cases) {
    const res = await svc.request({
      method: 'GET',
      url: `/products?${new URLSearchParams(params).toString()}`,
      token,
    });
    const problem = assertProblem(res, { slug: 'validation-error', instance: '/products', errors: 'any' });
    assert.deepEqual(
      (problem.errors as Array<{ field: string }>).map((e) => e.field),
      [field],
      JSON.stringify(params),
    );
  }
});

void test('tenants search only their own catalog; without q or a filter the list is unchanged', async () => {
  const mine = await svc.token(svc.tenant('search-mine'));
  const theirs = await svc.token(svc.tenant('search-theirs'));
  await store(mine, [item('same-id', 'Walnut desk', [{ sku: 'wd-1', brand: 'Acme' }])]);
  await store(theirs, [item('other-id', 'Walnut desk', [{ sku: 'wd-2', brand: 'Acme' }])]);
  assert.deepEqual(await found(mine, { q: 'walnut' }), ['same-id']);
  assert.deepEqual(await found(theirs, { q: 'walnut' }), ['other-id']);
  assert.deepEqual(await found(theirs, { q: 'wd 1' }), []);
  assert.deepEqual(await found(theirs, { color: 'Beige' }), ['other-id']);
  const plain = await get(mine, {});
  assert.deepEqual(Object.keys(plain).sort(), ['data', 'next_cursor']);
  assert.deepEqual(
    plain.data.map((p) => p.external_id),
    ['same-id'],
  );
  // A search answers products in the same shape as the list.
  const searched = await get(mine, { q: 'walnut' });
  assert.deepEqual(searched.data, plain.data);
  // A q without any word matches every product (each of its no words matches).
  assert.deepEqual(await found(mine, { q: ' -- ' }), ['same-id']);
});

void test('the search follows updates and variant deletes', async () => {
  const token = await svc.token(svc.tenant('search-changes'));
  await store(token, [
    item('c-1', 'Teak bench', [
      { sku: 'tk-1', brand: 'Acme' },
      { sku: 'tk-2', brand: 'Zeta' },
    ]),
  ]);
  assert.deepEqual(await found(token, { q: 'zeta teak' }), ['c-1']);
  // A later batch renames the product and sends one variant: the other's sku and brand stay searchable.
  await store(token, [item('c-1', 'Oak bench', [{ sku: 'tk-1', brand: 'Acme' }])]);
  assert.deepEqual(await found(token, { q: 'teak' }), []);
  assert.deepEqual(await found(token, { q: 'oak zeta tk 2' }), ['c-1']);
  const res = await svc.request({ method: 'DELETE', url: '/products/c-1/variants/tk-2', token });
  assert.equal(res.statusCode, 204);
  assert.deepEqual(await found(token, { q: 'zeta' }), []);
  assert.deepEqual(await found(token, { q: 'acme oak' }), ['c-1']);
});
