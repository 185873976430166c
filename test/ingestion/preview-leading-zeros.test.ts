import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testServicesForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { ingest, previewItems } from '../helpers/assertions.ts';
import { leadingZeroWarnings, withoutLeadingZeros } from '../../src/catalog/sku-lookalikes.ts';

/**
 * docs/spreadsheets.md, "Leading zeros": the preview warns when an item would add a variant whose sku
 * equals a sku of the same product once leading zeros are dropped, as a spreadsheet program that read
 * `00102065` as a number would make it; the item stays valid.
 */

const [svc] = testServicesForFile([{}]);

interface Entry {
  index: number;
  action: string;
  changes: string[];
  errors: unknown[];
  warnings?: Array<{ field: string; code: string; message: string; sku: string; stored_sku: string }>;
}

const previewOf = (token: string, items: unknown[]) =>
  previewItems<{ summary: Record<string, number>; data: Entry[] }>(svc, token, items);

const message = (sku: string, stored: string) =>
  `sku "${sku}" would be added as a new variant, but the product has the sku "${stored}", the same once ` +
  'leading zeros are dropped. If a spreadsheet program dropped them, set the sku column to text when ' +
  'opening the file (docs/spreadsheets.md, "Leading zeros").';

describe('preview: an added sku that differs from a stored one only by leading zeros', () => {
  void test('is a warning naming both skus; the item stays a valid update', async () => {
    const token = await svc.token(svc.tenant('zeros'));
    const stored = product({ variants: [variant({ sku: '00102065' }), variant({ sku: 'A-7' })] });
    assert.equal((await ingest(svc, token, [stored])).status, 'completed');
    const other = product({ variants: [variant({ sku: '102065x' })] });
    assert.equal((await ingest(svc, token, [other])).status, 'completed');

    const answer = await previewOf(token, [
      // LibreOffice's number: the zeros dropped.
      { ...stored, variants: [variant({ sku: '102065' })] },
      // A sku that only looks alike on another product, and one that is the stored sku itself.
      { ...other, variants: [variant({ sku: '0102065x' }), variant({ sku: '102065x' })] },
    ]);
    assert.deepEqual(answer.summary, { create: 0, update: 2, unchanged: 0, invalid: 0 });
    const [first, second] = answer.data;
    assert.deepEqual(first?.changes, ['variants[0]']);
    assert.deepEqual(first?.errors, []);
    assert.deepEqual(first?.warnings, [
      {
        field: 'variants[0].sku',
        code: 'sku_leading_zeros',
        message: message('102065', '00102065'),
        sku: '102065',
        stored_sku: '00102065',
      },
    ]);
    assert.deepEqual(second?.warnings, [
      {
        field: 'variants[0].sku',
        code: 'sku_leading_zeros',
        message: message('0102065x', '102065x'),
        sku: '0102065x',
        stored_sku: '102065x',
      },
    ]);
  });

  void test('an entry without such a variant has no warnings member', async () => {
    const token = await svc.token(svc.tenant('zeros-none'));
    const stored = product({ variants: [variant({ sku: '00102065' })] });
    assert.equal((await ingest(svc, token, [stored])).status, 'completed');
    const answer = await previewOf(token, [
      { ...stored, variants: [variant({ sku: '00102065', price: 1 }), variant({ sku: '0010206' })] },
      product({ variants: [variant({ sku: '102065' })] }),
    ]);
    assert.deepEqual(
      answer.data.map((entry) => [entry.action, 'warnings' in entry]),
      [
        ['update', false],
        ['create', false],
      ],
    );
  });

  void test('a variant added by an earlier item of the same body counts as the product’s', async () => {
    const token = await svc.token(svc.tenant('zeros-body'));
    const created = product({ variants: [variant({ sku: '0042' })] });
    const answer = await previewOf(token, [created, { ...created, variants: [variant({ sku: '42' })] }]);
    assert.deepEqual(
      answer.data.map((entry) => [entry.action, entry.warnings?.map((w) => [w.sku, w.stored_sku])]),
      [
        ['create', undefined],
        ['update', [['42', '0042']]],
      ],
    );
  });
});

describe('leadingZeroWarnings', () => {
  void test('matches either way, and zeros only', () => {
    assert.equal(withoutLeadingZeros('000'), '0');
    assert.equal(withoutLeadingZeros('0A0'), 'A0');
    assert.deepEqual(
      leadingZeroWarnings(
        [
          { index: 0, sku: '007' },
          { index: 1, sku: '0' },
          { index: 2, sku: '7b' },
        ],
        ['7', '000', '07b'],
      ).map(({ field, sku, stored_sku }) => [field, sku, stored_sku]),
      [
        ['variants[0].sku', '007', '7'],
        ['variants[1].sku', '0', '000'],
        ['variants[2].sku', '7b', '07b'],
      ],
    );
  });
});
