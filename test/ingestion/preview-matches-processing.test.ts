import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { VARIANT_KEYS_REQUIRED } from '../helpers/catalog-arbitraries.ts';
import { previewItems } from '../helpers/assertions.ts';

/**
 * docs/reference.md §10.3, as a property: for any body against any stored catalog, the preview's verdict on
 * each item is what processing the same body then does with it. Keys come from small pools, so
 * bodies repeat external_ids and skus, take skus of stored and earlier products, and mix valid
 * items with invalid ones. `PROPERTY_SEED` replays a failing run.
 */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

const PRODUCTS = ['p0', 'p1', 'p2'];
const SKUS = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7'];
const URLS = ['https://cdn.example/a.jpg', 'https://cdn.example/b.jpg', 'https://cdn.example/c.jpg'];

/** Mostly a valid value, now and then a defect: most items stay valid, and some are not. */
const mostly = <T, U>(valid: fc.Arbitrary<T>, defect: fc.Arbitrary<U>) =>
  fc.oneof({ weight: 15, arbitrary: valid }, { weight: 1, arbitrary: defect });

const image = (defects: boolean) =>
  fc.record(
    {
      url: fc.constantFrom(...URLS),
      angle: defects
        ? mostly(fc.constantFrom(0, 90, 359.5, null), fc.constant(400))
        : fc.constantFrom(0, 90, null),
    },
    { requiredKeys: ['url'] },
  );

const variant = fc.record(
  {
    sku: fc.constantFrom(...SKUS),
    name: mostly(fc.constantFrom('Oak', 'Walnut'), fc.constant(7)),
    item_url: mostly(fc.constant('https://shop.example/x'), fc.constant('http://shop.example/x')),
    depth: mostly(fc.constant(10), fc.constant(10.5)),
    height: fc.constant(80),
    width: fc.constant(200),
    weight: mostly(fc.constant(5), fc.constant(-1)),
    color: mostly(fc.constantFrom('Blue', 'Red'), fc.constant('blue')),
    price: fc.constantFrom(99.99, 100),
    brand: fc.constant('Northwind'),
    images: mostly(
      fc.uniqueArray(image(true), { minLength: 1, maxLength: 3, selector: (i) => i.url }),
      fc.constant([]),
    ),
  },
  {
    requiredKeys: [...VARIANT_KEYS_REQUIRED],
  },
);

const item = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      external_id: fc.constantFrom(...PRODUCTS),
      name: mostly(fc.constantFrom('Sofa', 'Chair'), fc.constant(null)),
      description: fc.constant('A piece'),
      style: mostly(fc.constantFrom('Modern', 'Rustic'), fc.constant('modern')),
      type: fc.constant('Sofas & Loveseats'),
      sub_type: fc.constant('Sofa'),
      // Now and then a sku twice in one item (duplicate_key), or no variant at all.
      variants: mostly(
        fc.uniqueArray(variant, { minLength: 1, maxLength: 2, selector: (v) => v.sku }),
        fc.oneof(fc.constant([]), fc.array(variant, { minLength: 2, maxLength: 3 })),
      ),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('not an item', null, 7) },
);

/** A catalog to store first: valid products (one may still take another's sku, and not be stored). */
const storedCatalog = fc.array(
  fc.record({
    external_id: fc.constantFrom(...PRODUCTS),
    name: fc.constantFrom('Sofa', 'Chair'),
    description: fc.constant('A piece'),
    style: fc.constantFrom('Modern', 'Rustic'),
    type: fc.constant('Sofas & Loveseats'),
    sub_type: fc.constant('Sofa'),
    variants: fc.uniqueArray(
      fc.record({
        sku: fc.constantFrom(...SKUS),
        name: fc.constantFrom('Oak', 'Walnut'),
        item_url: fc.constant('https://shop.example/x'),
        depth: fc.constant(10),
        height: fc.constant(80),
        width: fc.constant(200),
        weight: fc.constant(5),
        color: fc.constantFrom('Blue', 'Red'),
        price: fc.constantFrom(99.99, 100),
        brand: fc.constant('Northwind'),
        images: fc.uniqueArray(image(false), { minLength: 1, maxLength: 2, selector: (i) => i.url }),
      }),
      { minLength: 1, maxLength: 2, selector: (v) => v.sku },
    ),
  }),
  { maxLength: 3 },
);

/** An item of a body, or a copy of a stored or earlier item (which then mostly changes nothing). */
const bodyItem = fc.oneof(
  { weight: 3, arbitrary: item },
  { weight: 1, arbitrary: fc.record({ copyOf: fc.nat() }) },
);

/** The body with each copy replaced by the stored or earlier item it names. */
function resolveCopies(stored: unknown[], drawn: unknown[]): unknown[] {
  const body: unknown[] = [];
  for (const entry of drawn) {
    const copyOf = (entry as { copyOf?: number } | null)?.copyOf;
    const pool = [...stored, ...body];
    body.push(copyOf === undefined ? entry : (pool[copyOf % pool.length] ?? 'not an item'));
  }
  return body;
}

interface Entry {
  index: number;
  action: string;
  errors: unknown[];
}

const previewOf = (token: string, items: unknown[]) =>
  previewItems<{ summary: Record<string, number>; data: Entry[] }>(svc, token, items);

void test('for random bodies, preview says of each item what processing then does with it', async () => {
  let runs = 0;
  const mix = { create: 0, update: 0, unchanged: 0, invalid: 0 };
  const seed = Number(process.env.PROPERTY_SEED ?? Date.now() % 2 ** 31);
  await fc.assert(
    fc.asyncProperty(
      storedCatalog,
      fc.array(bodyItem, { minLength: 1, maxLength: 12 }),
      async (stored, drawn) => {
        const body = resolveCopies(stored, drawn);
        runs += 1;
        const token = await svc.token(svc.tenant('property'));
        if (stored.length > 0) await svc.waitForTerminal(token, await svc.submit(token, stored));
        const preview = await previewOf(token, body);

        const batchId = await svc.submit(token, body);
        const record = await svc.waitForTerminal(token, batchId);
        const records = await svc.allErrors(token, batchId);
        // Invalid in the preview exactly when failed in the batch, with the errors page's very errors.
        assert.deepEqual(
          preview.data
            .filter((entry) => entry.action === 'invalid')
            .map(({ index, errors }) => ({ index, errors })),
          records.map(({ index, errors }) => ({ index, errors })),
        );
        assert.equal(record.failed, preview.summary.invalid);
        assert.equal(
          record.upserted,
          preview.summary.create! + preview.summary.update! + preview.summary.unchanged!,
        );

        // Once applied, the last applied item of each product changes nothing more: the preview's view
        // of the catalog agrees with what processing stored (numbers, angles, merged images).
        const applied = preview.data.filter((entry) => entry.action !== 'invalid');
        const last = [
          ...new Map(
            applied.map((entry) => [(body[entry.index] as { external_id: string }).external_id, entry]),
          ).values(),
        ].map((entry) => body[entry.index]);
        if (last.length > 0) {
          const again = await previewOf(token, last);
          assert.deepEqual(
            again.data.map((entry) => entry.action),
            last.map(() => 'unchanged'),
          );
        }
        for (const action of Object.keys(mix) as Array<keyof typeof mix>)
          mix[action] += preview.summary[action]!;
      },
    ),
    { numRuns: 30, seed },
  );
  assert.equal(runs, 30);
  // Every action came up: a generator that made only invalid items would prove little.
  for (const [action, count] of Object.entries(mix))
    assert.ok(count > 0, `${action}: ${JSON.stringify(mix)}`);
});
