import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { asSent, createCatalogModel } from '../../reliability/catalog-model.ts';
import { createItemValidator } from '../../src/validation/item-validator.ts';
import { brokenItemArb, itemArb, propertyRuns } from '../helpers/catalog-arbitraries.ts';
import { errorShapes } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  countersOf,
  storedProduct,
  viewOf,
  waitTerminal,
  withoutTimestamps,
} from '../helpers/assertions.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * Properties of the upsert through the real HTTP API, worker and database: a valid item reads back
 * as sent, and any sequence of batches leaves the catalog, counters and error records the model of
 * docs/reference.md §5 (reliability/catalog-model.ts) predicts. Each run is a tenant of its own.
 */

let svc: TestService;
before(async () => {
  // Small chunks, so a batch spans several chunk writes and items of one product meet across them.
  svc = await startTestService({ WORKER_CHUNK_SIZE: '4' });
});
after(async () => {
  await svc?.stop();
});

const validate = createItemValidator();
const skusOf = (item: Record<string, unknown>) =>
  (item.variants as Array<Record<string, unknown>>).map((variant) => variant.sku as string);

/** 1–5 valid items with distinct external_ids and no sku shared between them. */
const distinctItemsArb = fc
  .uniqueArray(itemArb(), { minLength: 1, maxLength: 5, selector: (item) => item.external_id })
  .filter((items) => {
    const skus = items.flatMap(skusOf);
    return new Set(skus).size === skus.length;
  });

void test('a valid item reads back unchanged after its upsert', async (t) => {
  await fc.assert(
    fc.asyncProperty(distinctItemsArb, async (items) => {
      const token = await svc.token(svc.tenant('round-trip'));
      const batchId = await svc.submit(token, items);
      const final = await waitTerminal(svc, token, batchId);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      for (const item of items) {
        const stored = await storedProduct(svc, token, item.external_id as string);
        assert.deepEqual(withoutTimestamps(stored), viewOf(asSent(item) as Record<string, unknown>));
      }
    }),
    propertyRuns(t, 25),
  );
});

/** Small pools of keys and urls, so items of a run meet: repeated products, skus, image urls. */
const EXTERNAL_IDS = ['p0', 'p1', 'p2', 'p3'];
const SKUS = ['s0', 's1', 's2', 's3', 's4', 's5'];
const URLS = [
  'https://cdn.test/a.jpg',
  'https://cdn.test/b.jpg',
  'https://cdn.test/c.jpg',
  'https://cdn.test/d.jpg',
];

/**
 * An item of a sequence: mostly valid ones over the pools (whole products, or PATCH-style ones with
 * fewer variants and images absent or partly sent, angles absent, null or changed), some broken.
 */
const sequenceItemArb = (() => {
  const pooled = itemArb({
    externalId: fc.constantFrom(...EXTERNAL_IDS),
    sku: fc.constantFrom(...SKUS),
    url: fc.constantFrom(...URLS),
    maxVariants: 3,
  });
  return fc.oneof(
    { weight: 6, arbitrary: pooled },
    { weight: 2, arbitrary: brokenItemArb(pooled) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
})();

/** 1–4 batches of 1–10 items each. */
const sequenceArb = fc.array(fc.array(sequenceItemArb, { minLength: 1, maxLength: 10 }), {
  minLength: 1,
  maxLength: 4,
});

void test('for random sequences of batches, the catalog, counters and errors equal the model', async (t) => {
  await fc.assert(
    fc.asyncProperty(sequenceArb, async (batches) => {
      const token = await svc.token(svc.tenant('model'));
      const model = createCatalogModel(validate);
      // Submitted back to back: the batches of one tenant take effect in submission order.
      const batchIds: string[] = [];
      for (const items of batches) batchIds.push(await svc.submit(token, items));
      for (const [n, items] of batches.entries()) {
        const expected = model.applyBatch(items);
        const final = await waitTerminal(svc, token, batchIds[n]!);
        assert.deepEqual(countersOf(final), expected.counters, `batch ${n}`);
        const records = await svc.allErrors(token, batchIds[n]!);
        assert.deepEqual(errorShapes(records), expected.failures, `errors of batch ${n}`);
      }
      const stored = (await allProducts(svc, token)).map(withoutTimestamps);
      assert.deepEqual(stored, model.products());
    }),
    propertyRuns(t, 50),
  );
});
