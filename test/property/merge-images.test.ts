import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mergeImages, type MergedImage } from '../../src/catalog/merge-items.ts';
import type { ProductImageIngest } from '../../src/catalog/product-schema.ts';
import { propertyRuns } from '../helpers/catalog-arbitraries.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * The image merge has two implementations: `mergeImages` in TypeScript (src/catalog/merge-items.ts:
 * the preview and the worker's narrowed-down paths) and the PL/pgSQL `merge_images` of migration
 * 005 (what the variants upsert runs). These hold them equal on generated images: few urls, so
 * duplicates are common, in a patch and between a patch and the stored ones; angles sent, sent as
 * null or absent. Embedded PostgreSQL by default, the server with TEST_DATABASE_URL.
 */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

const URLS = [
  'https://a.example/1.jpg',
  'https://a.example/2.jpg',
  'https://b.example/3.jpg',
  'https://b.example/4.jpg',
];
const urlArb = fc.constantFrom(...URLS);
/** An angle as an item sends it: a number (halves included), null (clear it) or absent (keep it). */
const angleArb = fc.oneof(
  fc.integer({ min: 0, max: 720 }).map((half) => half / 2),
  fc.constant(null),
);
const imageArb: fc.Arbitrary<ProductImageIngest> = fc.record(
  { url: urlArb, angle: angleArb },
  { requiredKeys: ['url'] },
);
/** A patch: 1–6 images, urls repeating. */
const patchArb = fc.array(imageArb, { minLength: 1, maxLength: 6 });
/** Stored images: distinct urls in merge order, each with an angle, null, or none. */
const storedArb: fc.Arbitrary<MergedImage[]> = fc.uniqueArray(imageArb, {
  maxLength: 4,
  selector: (image) => image.url,
});

async function sqlMerge(
  stored: readonly MergedImage[],
  patch: readonly MergedImage[],
): Promise<MergedImage[]> {
  const [row] = await svc.service.db.query<{ merged: string }>(
    'SELECT merge_images($1::jsonb, $2::jsonb)::text AS merged',
    [JSON.stringify(stored), JSON.stringify(patch)],
  );
  return JSON.parse(row!.merged) as MergedImage[];
}

/** As JSON carries it: what both sides compare on. */
const asJson = (images: readonly MergedImage[]) => JSON.parse(JSON.stringify(images)) as MergedImage[];

void test('merge_images in SQL equals mergeImages in TypeScript', async (t) => {
  await fc.assert(
    fc.asyncProperty(storedArb, patchArb, async (stored, patch) => {
      assert.deepEqual(await sqlMerge(stored, patch), asJson(mergeImages(stored, patch)));
    }),
    propertyRuns(t, 200),
  );
});

void test('patches folded together, then merged in SQL, equal the patches applied one by one', async (t) => {
  // The worker folds a run's patches of one variant in TypeScript (mergeItems) and hands the fold to
  // the upsert's merge_images: PATCH after PATCH, as separate batches would apply them.
  await fc.assert(
    fc.asyncProperty(
      storedArb,
      fc.array(patchArb, { minLength: 1, maxLength: 4 }),
      async (stored, patches) => {
        const oneByOne = patches.reduce<MergedImage[]>((images, patch) => mergeImages(images, patch), stored);
        const folded = patches.reduce<MergedImage[]>((images, patch) => mergeImages(images, patch), []);
        assert.deepEqual(await sqlMerge(stored, folded), asJson(oneByOne));
      },
    ),
    propertyRuns(t, 200),
  );
});
