import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  filterChoices,
  initialFilter,
  previewPage,
  PREVIEW_PAGE_ROWS,
} from '../../ui/src/import/preview-filter.ts';
import type { FilePreview, PreviewRow } from '../../ui/src/import/preview-rows.ts';

/** The import preview's filter and pages (docs/ui.md, "Import"), without a page. */

const row = (position: number, action: PreviewRow['action'], warned = false): PreviewRow => ({
  position,
  line: position + 2,
  external_id: `p-${position}`,
  action,
  changes: [],
  diff: [],
  errors: [],
  warnings: warned ? [{ field: 'variants[0].sku', code: 'sku_leading_zeros', message: 'm' }] : [],
});

/** A preview of `rows`, its totals counted from them. */
function previewOf(rows: PreviewRow[]): FilePreview {
  const totals = { create: 0, update: 0, unchanged: 0, invalid: 0 };
  for (const { action } of rows) totals[action]++;
  const warnings = rows.reduce((sum, { warnings }) => sum + warnings.length, 0);
  return {
    items: rows.length,
    totals,
    warnings,
    unsendable: 0,
    invalidPositions: new Set(),
    rows,
    unavailable: null,
  };
}

// 2,464 items of which 56 change, as the real update file of the issue: 50 updates, 4 creates, 2 invalid.
const rows = Array.from({ length: 2464 }, (_, i) =>
  row(i, i < 50 ? 'update' : i < 54 ? 'create' : i < 56 ? 'invalid' : 'unchanged', i === 3),
);
const preview = previewOf(rows);

void test('a file whose items mostly change nothing opens on its changes, with the count of each choice', () => {
  assert.equal(initialFilter(preview), 'changes');
  assert.deepEqual(
    filterChoices(preview).map(({ filter, count }) => [filter, count]),
    [
      ['changes', 56],
      ['all', 2464],
      ['create', 4],
      ['update', 50],
      ['unchanged', 2408],
      ['invalid', 2],
      ['warnings', 1],
    ],
  );
  const first = previewPage(rows, 'changes', 1);
  assert.deepEqual([first.page, first.pages, first.matching, first.rows.length], [1, 1, 56, 56]);
  assert.ok(first.rows.every(({ action }) => action !== 'unchanged'));
});

void test('a file of new items opens on all of them', () => {
  assert.equal(initialFilter(previewOf([row(0, 'create'), row(1, 'unchanged')])), 'all');
});

void test('pages of 100 rows; a page past the last shows the last', () => {
  assert.equal(PREVIEW_PAGE_ROWS, 100);
  const third = previewPage(rows, 'unchanged', 3);
  assert.deepEqual(
    [third.page, third.pages, third.matching, third.rows[0]?.position, third.rows.length],
    [3, 25, 2408, 256, 100],
  );
  const last = previewPage(rows, 'unchanged', 99);
  assert.deepEqual([last.page, last.rows.length, last.rows.at(-1)?.position], [25, 8, 2463]);
  assert.deepEqual(
    previewPage(rows, 'warnings', 1).rows.map(({ position }) => position),
    [3],
  );
  const none = previewPage([], 'all', 1);
  assert.deepEqual([none.page, none.pages, none.rows], [1, 1, []]);
});
