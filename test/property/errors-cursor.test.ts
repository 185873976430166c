import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { propertyRuns } from '../helpers/catalog-arbitraries.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { waitTerminal } from '../helpers/assertions.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * Property (docs/reference.md §7): walking the cursors of a batch's errors yields every failed item exactly
 * once, in ascending index order, whatever the page size (1–500) and wherever the failures are.
 */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

interface ErrorPage {
  data: Array<{ index: number }>;
  next_cursor: string | null;
}

/** A batch size (1–1000) and the indices of its failing items. */
const batchArb = fc.integer({ min: 1, max: 1000 }).chain((size) =>
  fc.record({
    size: fc.constant(size),
    failing: fc.uniqueArray(fc.nat(size - 1), { maxLength: size }).map((list) => list.sort((a, b) => a - b)),
  }),
);

/** Page sizes, small ones often (many pages), any up to 500. */
const limitsArb = fc.array(fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 500 })), {
  minLength: 1,
  maxLength: 3,
});

/** Walks the errors of `batchId` with `limit`; returns the pages. */
async function walk(token: string, batchId: string, limit: number): Promise<ErrorPage[]> {
  const pages: ErrorPage[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await svc.request({
      method: 'GET',
      url: `/products/ingestions/${batchId}/errors?limit=${limit}${query}`,
      token,
    });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<ErrorPage>();
    pages.push(page);
    cursor = page.next_cursor;
    assert.ok(pages.length <= 1001, 'the walk ends');
  } while (cursor !== null);
  return pages;
}

void test('the errors cursor never repeats or skips a failed item, for any page size', async (t) => {
  await fc.assert(
    fc.asyncProperty(batchArb, limitsArb, async ({ size, failing }, limits) => {
      const token = await svc.token(svc.tenant('cursor'));
      const failingSet = new Set(failing);
      // A failing item is a string (invalid_type); the others are valid products.
      const items = Array.from({ length: size }, (_, n) => (failingSet.has(n) ? `item ${n}` : product()));
      const final = await waitTerminal(svc, token, await svc.submit(token, items), 60_000);
      assert.equal(final.failed, failing.length);
      for (const limit of limits) {
        const pages = await walk(token, final.batch_id, limit);
        const where = `limit ${limit}, ${failing.length} failed of ${size}`;
        assert.deepEqual(
          pages.flatMap((page) => page.data.map((record) => record.index)),
          failing,
          where,
        );
        // Full pages until the last; the last may be empty only when there is nothing at all.
        pages.slice(0, -1).forEach((page) => assert.equal(page.data.length, limit, where));
        const last = pages[pages.length - 1]!;
        assert.ok(last.data.length <= limit, where);
        if (failing.length > 0) assert.ok(last.data.length > 0, `an empty last page: ${where}`);
      }
    }),
    propertyRuns(t, 10),
  );
});
