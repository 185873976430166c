import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { ingest, storedProduct, withoutTimestamps } from '../helpers/assertions.ts';
import { catalogOf, importItems, linesOf, requestExport } from './export-helpers.ts';

/** docs/reference.md §11.4: an export ingested into an empty tenant gives the same catalog, timestamps aside. */

const svc = testServiceForFile();

const images = (variantName: string, from: number, count: number, angle?: (n: number) => number | null) =>
  Array.from({ length: count }, (_, i) => {
    const n = from + i;
    const url = `https://cdn.example/${variantName}/${n}.jpg`;
    return angle === undefined ? { url } : { url, angle: angle(n) };
  });

/** `GET /products/{id}` of every id, in both tenants, timestamps aside, must be equal. */
async function assertSameProducts(source: string, copy: string, ids: string[]): Promise<void> {
  for (const id of ids) {
    const original = withoutTimestamps(await storedProduct(svc, source, id));
    assert.deepEqual(withoutTimestamps(await storedProduct(svc, copy, id)), original, id);
  }
}

void test('a variant with more than 10 stored images is exported in parts; an import joins them back', async () => {
  const source = await svc.token(svc.tenant('split-source'));
  const base = product({ external_id: 'split' });
  const sku = (name: string) => `split-${name}`;
  const withImages = (name: string, list: unknown[]) => variant({ sku: sku(name), name, images: list });
  // Merges let a variant grow past one item's 10 images: 25 on a, 3 on b, 12 on c.
  await ingest(svc, source, [
    {
      ...base,
      variants: [
        withImages(
          'a',
          images('a', 0, 10, (n) => n),
        ),
        withImages('b', images('b', 0, 3)),
      ],
    },
    {
      ...base,
      variants: [
        withImages(
          'c',
          images('c', 0, 10, () => null),
        ),
      ],
    },
  ]);
  await ingest(svc, source, [
    { ...base, variants: [withImages('a', images('a', 10, 10))] },
    {
      ...base,
      variants: [
        withImages(
          'c',
          images('c', 10, 2, (n) => n * 10),
        ),
      ],
    },
  ]);
  await ingest(svc, source, [
    {
      ...base,
      variants: [
        withImages(
          'a',
          images('a', 20, 5, (n) => n),
        ),
      ],
    },
  ]);

  const lines = linesOf(await requestExport(svc, source));
  const variantOf = (name: string, list: unknown[]) => withImages(name, list);
  // The product with every variant and its first 10 images, then each further 10 of a variant alone.
  assert.deepEqual(lines, [
    {
      ...base,
      variants: [
        variantOf(
          'a',
          images('a', 0, 10, (n) => n),
        ),
        variantOf('b', images('b', 0, 3)),
        variantOf('c', images('c', 0, 10)),
      ],
    },
    { ...base, variants: [variantOf('a', images('a', 10, 10))] },
    {
      ...base,
      variants: [
        variantOf(
          'a',
          images('a', 20, 5, (n) => n),
        ),
      ],
    },
    {
      ...base,
      variants: [
        variantOf(
          'c',
          images('c', 10, 2, (n) => n * 10),
        ),
      ],
    },
  ]);

  const copy = await svc.token(svc.tenant('split-copy'));
  await importItems(svc, copy, lines);
  await assertSameProducts(source, copy, ['split']);
  const stored = await storedProduct(svc, copy, 'split');
  const counts = (stored.variants as Array<{ images: unknown[] }>).map((v) => v.images.length);
  assert.deepEqual(counts, [25, 3, 12]);
});

void test('export round trip with unicode, quotes, newlines, null angles, 1e21 into an empty tenant is exact', async () => {
  const source = await svc.token(svc.tenant('trip-source'));
  const tricky = [
    product({
      external_id: 'ünïcødé-😀-ß-東京',
      name: 'Sofa "Deluxe" \\ backslash, comma; semi',
      description:
        'Line one\nline two\r\nwindows\ttab \u2028 separator \u2029 paragraph, RTL \u05e9\u05dc\u05d5\u05dd',
      variants: [
        variant({
          sku: 'q"uote\'d\nsku',
          name: '',
          brand: 'e\u0301 combining, zero\u200bwidth',
          depth: 1e21,
          height: 0,
          width: 0.1,
          weight: 1.7976931348623157e308,
          price: 123456789.12345679,
          images: [
            { url: "https://cdn.example/a.jpg?x='1'&y=%20%22", angle: null },
            { url: 'https://cdn.example/b.jpg' },
            { url: 'https://cdn.example/c.jpg', angle: 359.999 },
            { url: 'https://cdn.example/d.jpg', angle: 0 },
          ],
        }),
        variant({ sku: 'no-images', images: undefined }),
      ],
    }),
    product({ external_id: ' leading space', description: '' }),
    product({ external_id: 'emoji-only-😀😀', name: '<script>alert(1)</script>' }),
  ];
  delete (tricky[0]!.variants as Array<Record<string, unknown>>)[1]!.images;
  await importItems(svc, source, tricky);
  // A cleared angle and a patched field, as merges leave them.
  await ingest(svc, source, [
    {
      ...tricky[2],
      variants: [
        {
          ...(tricky[2]!.variants as unknown[])[0]!,
          images: [{ url: 'https://cdn.example/sofa-front.jpg', angle: null }],
        },
      ],
    },
  ]);
  // A catalog bigger than one page of the export's reads.
  const filler = Array.from({ length: 1200 }, (_, i) => product({ external_id: `filler-${i}` }));
  await ingest(svc, source, filler.slice(0, 1000));
  await ingest(svc, source, filler.slice(1000));

  const exported = await requestExport(svc, source);
  const lines = linesOf(exported);
  assert.equal(lines.length, 1203);
  const copy = await svc.token(svc.tenant('trip-copy'));
  await importItems(svc, copy, lines);

  await assertSameProducts(
    source,
    copy,
    tricky.map((item) => item.external_id as string),
  );
  assert.deepEqual(await catalogOf(svc, copy), await catalogOf(svc, source));
  // And the copy exports the same file.
  assert.equal((await requestExport(svc, copy)).body, exported.body);
});
