import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SharedStringTable } from '../../src/spreadsheets/shared-string-table.ts';

/**
 * The reader's compact shared-strings table (src/spreadsheets/shared-string-table.ts): every entry
 * back exactly as added, whatever its characters, across the buffer's growth; an index it does not
 * hold is undefined, which the sheet's reader turns into its error naming the cell.
 */

void test('entries come back exactly, in order, across the growth of the buffer', () => {
  const table = new SharedStringTable();
  const entries = Array.from({ length: 30_000 }, (_, i) =>
    i % 5 === 0 ? '' : `LOBERGET / BLYSKÄR ${i} ÄPPLARÖ 😀 桌子 ${'é'.repeat(i % 7)}`,
  );
  for (const entry of entries) table.add(entry);
  assert.equal(table.size, 30_000);
  // More than the first 64 KiB buffer and the first 4096 ends: both grew several times.
  assert.ok(entries.join('').length > 500_000);
  for (const [i, entry] of entries.entries()) assert.equal(table.at(i), entry, `entry ${i}`);
});

void test('a text UTF-8 cannot carry (a lone surrogate from an _xD83D_ escape) is kept as it is', () => {
  const table = new SharedStringTable();
  table.add('before');
  table.add('half \uD83D of an emoji');
  table.add('\uDE00');
  table.add('');
  table.add('after 😀');
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((i) => table.at(i)),
    ['before', 'half \uD83D of an emoji', '\uDE00', '', 'after 😀'],
  );
});

void test('an index the table does not hold is undefined', () => {
  const table = new SharedStringTable();
  table.add('only');
  for (const index of [1, -1, 0.5, Number.NaN, 2 ** 32])
    assert.equal(table.at(index), undefined, String(index));
  assert.equal(new SharedStringTable().at(0), undefined);
});

void test('an entry that begins with U+FEFF keeps it (a BOM carried into a cell is text, not a mark)', () => {
  const table = new SharedStringTable();
  table.add('\uFEFFexternal_id');
  table.add('\uFEFF');
  table.add('name');
  assert.deepEqual(
    [0, 1, 2].map((i) => table.at(i)),
    ['\uFEFFexternal_id', '\uFEFF', 'name'],
  );
});
