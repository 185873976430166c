import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { assertProblem, ingest } from '../helpers/assertions.ts';

/** `GET /products?prefix=` (docs/decisions.md): the stored products whose external_id starts with it. */

const svc = testServiceForFile();

type ProductPage = { data: Array<{ external_id: string }>; next_cursor: string | null };

/** The external ids of each page of `GET /products?…` with `params`, following the cursors. */
async function pagesOf(token: string, params: Record<string, string>): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const search = new URLSearchParams({ ...params, ...(cursor ? { cursor } : {}) });
    const res = await svc.request({ method: 'GET', url: `/products?${search.toString()}`, token });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<ProductPage>();
    assert.deepEqual(Object.keys(page).sort(), ['data', 'next_cursor']);
    pages.push(page.data.map((p) => p.external_id));
    cursor = page.next_cursor;
    assert.ok(pages.length <= 10, 'more pages than products');
  } while (cursor);
  return pages;
}

// Ids around the prefixes below: before them, after them, and ones that only contain them.
const IDS = ['chair-1', 'chair-10', 'chair-2', 'chairs', 'chai', 'Chair-3', 'armchair-1', 'table-1', 'cha'];

void test('prefix lists exactly the ids that start with it, in order, page by page', async () => {
  const token = await svc.token(svc.tenant('prefix'));
  await ingest(
    svc,
    token,
    IDS.map((external_id) => product({ external_id })),
  );
  assert.deepEqual(await pagesOf(token, { prefix: 'chair' }), [['chair-1', 'chair-10', 'chair-2', 'chairs']]);
  assert.deepEqual(await pagesOf(token, { prefix: 'chair', limit: '2' }), [
    ['chair-1', 'chair-10'],
    ['chair-2', 'chairs'],
  ]);
  // Case-sensitive, and a prefix can be a whole id.
  assert.deepEqual(await pagesOf(token, { prefix: 'Chair' }), [['Chair-3']]);
  assert.deepEqual(await pagesOf(token, { prefix: 'chair-1' }), [['chair-1', 'chair-10']]);
  assert.deepEqual(await pagesOf(token, { prefix: 'cha', limit: '3' }), [
    ['cha', 'chai', 'chair-1'],
    ['chair-10', 'chair-2', 'chairs'],
  ]);
  // No match: an empty last page, wherever the prefix falls among the ids.
  for (const prefix of ['aaa', 'chz', 'zzz', 'chair-3']) {
    assert.deepEqual(await pagesOf(token, { prefix }), [[]], prefix);
  }
  // Another tenant's products are never listed.
  const stranger = await svc.token(svc.tenant('prefix-stranger'));
  assert.deepEqual(await pagesOf(stranger, { prefix: 'chair' }), [[]]);
});

void test('a page that ends exactly at the last match has a cursor whose page is empty', async () => {
  const token = await svc.token(svc.tenant('prefix-edge'));
  await ingest(
    svc,
    token,
    ['k-1', 'k-2', 'l-1'].map((external_id) => product({ external_id })),
  );
  assert.deepEqual(await pagesOf(token, { prefix: 'k-', limit: '2' }), [['k-1', 'k-2']]);
  assert.deepEqual(await pagesOf(token, { prefix: 'k-', limit: '1' }), [['k-1'], ['k-2']]);
});

void test('a bad prefix is 400 validation-error naming it; one holding U+0000 matches nothing', async () => {
  const token = await svc.token(svc.tenant('prefix-bad'));
  for (const url of ['/products?prefix=', `/products?prefix=${'x'.repeat(256)}`]) {
    const res = await svc.request({ method: 'GET', url, token });
    const problem = assertProblem(res, {
      slug: 'validation-error',
      instance: url.split('?')[0]!,
      errors: 'any',
    });
    assert.deepEqual(
      (problem.errors as Array<{ field: string }>).map((e) => e.field),
      ['prefix'],
    );
  }
  // PostgreSQL text cannot hold U+0000, so no stored id starts with it.
  const res = await svc.request({ method: 'GET', url: '/products?prefix=a%00', token });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { data: [], next_cursor: null });
});
