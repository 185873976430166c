/** CSV of the scripts' labelled folders: read by header name, written so it reads back the same. */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { csvCell, readCsv } from '../../scripts/lib/csv.ts';

void test('rows carry their line number and their cells by column, a missing cell absent', () => {
  const rows = readCsv('\n a , b ,c\n1,2,3\n\n4,5\n', 'x.csv', ['a']);
  assert.deepEqual(rows, [
    { line: 3, cells: { a: '1', b: '2', c: '3' } },
    { line: 5, cells: { a: '4', b: '5' } },
  ]);
  // A column named twice is read from its first place.
  assert.deepEqual(readCsv('a,b,a\n1,2,3\n', 'x.csv', ['a']), [{ line: 2, cells: { a: '1', b: '2' } }]);
});

void test('a header without the columns asked for is refused, naming the file and them all', () => {
  assert.throws(() => readCsv('a,b\n', 'x.csv', ['file']), { message: 'x.csv needs "file" column' });
  assert.throws(() => readCsv('a\n', 'x.csv', ['file', 'label']), {
    message: 'x.csv needs "file" and "label" columns',
  });
  assert.throws(() => readCsv('', 'x.csv', ['panorama', 'yaws', 'label']), {
    message: 'x.csv needs "panorama", "yaws" and "label" columns',
  });
});

void test('a cell written by csvCell reads back as it was; a line break is refused', () => {
  const values = ['plain', 'a,b', 'say "hi"', '"', '', 'room (yaw 90°, 100° hfov)'];
  assert.deepEqual(values.map(csvCell), [
    'plain',
    '"a,b"',
    '"say ""hi"""',
    '""""',
    '',
    '"room (yaw 90°, 100° hfov)"',
  ]);
  const header = values.map((_, i) => `c${i}`).join(',');
  const [row] = readCsv(`${header}\n${values.map(csvCell).join(',')}\n`, 'x.csv', []);
  assert.deepEqual(Object.values(row!.cells), values);
  assert.throws(() => csvCell('two\nlines'), {
    message: 'a CSV cell cannot hold a line break: "two\\nlines"',
  });
});
