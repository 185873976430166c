import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant, withoutName } from '../helpers/catalog-fixtures.ts';
import { ingest, previewItems } from '../helpers/assertions.ts';

/** docs/reference.md §11.2: each preview entry's `diff`, with values, over HTTP against the real catalog. */

type Item = Record<string, unknown>;
interface Entry {
  index: number;
  action: string;
  changes: string[];
  diff: Item[];
}

const svc = testServiceForFile();

async function previewData(token: string, items: unknown[]): Promise<Entry[]> {
  return (await previewItems<{ data: Entry[] }>(svc, token, items)).data;
}

void test('diff: one element per path of changes, same order, with from/to, sku and url; add holds the whole variant or image', async () => {
  const token = await svc.token(svc.tenant('preview-values'));
  const brass = variant({
    sku: 'lamp-brass',
    price: 265,
    images: [
      { url: 'https://cdn.example/front.jpg', angle: 0 },
      { url: 'https://cdn.example/back.jpg', angle: 180 },
    ],
  });
  const lamp = product({ external_id: 'lamp', name: 'Arc lamp', variants: [brass] });
  assert.equal((await ingest(svc, token, [lamp])).status, 'completed');

  const { images: _none, ...black } = variant({ sku: 'lamp-black' });
  const changed = {
    ...lamp,
    description: '',
    variants: [
      black,
      {
        ...brass,
        price: 250,
        images: [
          { url: 'https://cdn.example/back.jpg', angle: null },
          { url: 'https://cdn.example/side.jpg', angle: 90 },
          // A known url without angle keeps the stored one: no element.
          { url: 'https://cdn.example/front.jpg' },
        ],
      },
    ],
  };
  const [entry] = await previewData(token, [changed]);
  assert.equal(entry!.action, 'update');
  const expected = [
    { path: 'description', op: 'change', from: lamp.description, to: '' },
    { path: 'variants[0]', op: 'add', sku: 'lamp-black', to: { ...black, images: [] } },
    { path: 'variants[1].price', op: 'change', sku: 'lamp-brass', from: 265, to: 250 },
    {
      path: 'variants[1].images[0].angle',
      op: 'change',
      sku: 'lamp-brass',
      url: 'https://cdn.example/back.jpg',
      from: 180,
      to: null,
    },
    {
      path: 'variants[1].images[1]',
      op: 'add',
      sku: 'lamp-brass',
      url: 'https://cdn.example/side.jpg',
      to: { url: 'https://cdn.example/side.jpg', angle: 90 },
    },
  ];
  assert.deepEqual(entry!.diff, expected);
  assert.deepEqual(
    entry!.changes,
    expected.map(({ path }) => path),
  );
});

void test('diff is [] wherever changes is: create, unchanged, invalid; a later item diffs against the earlier one', async () => {
  const token = await svc.token(svc.tenant('preview-values-empty'));
  const stored = product({ external_id: 'kept', variants: [variant({ sku: 'kept-1', price: 10 })] });
  assert.equal((await ingest(svc, token, [stored])).status, 'completed');
  const fresh = product({ external_id: 'fresh', variants: [variant({ sku: 'fresh-1', price: 5 })] });
  const data = await previewData(token, [
    stored,
    fresh,
    withoutName(),
    { ...fresh, variants: [variant({ sku: 'fresh-1', price: 6 })] },
  ]);
  assert.deepEqual(
    data.map(({ index, action, changes, diff }) => ({ index, action, changes, diff })),
    [
      { index: 0, action: 'unchanged', changes: [], diff: [] },
      { index: 1, action: 'create', changes: [], diff: [] },
      { index: 2, action: 'invalid', changes: [], diff: [] },
      {
        index: 3,
        action: 'update',
        changes: ['variants[0].price'],
        diff: [{ path: 'variants[0].price', op: 'change', sku: 'fresh-1', from: 5, to: 6 }],
      },
    ],
  );
});
