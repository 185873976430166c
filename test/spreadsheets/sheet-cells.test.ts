import { test } from 'node:test';
import assert from 'node:assert/strict';
import { guardFormula, plainDecimal, readCell, unguardFormula } from '../../src/spreadsheets/sheet-cells.ts';
import { escapeXlsxText, unescapeXlsxText } from '../../src/spreadsheets/xlsx-escapes.ts';
import { csvSeparator } from '../../src/spreadsheets/csv-rows.ts';

/** The cell rules of docs/reference.md §11.5 that a file's reader and the export's writers share. */

void test('the formula guard: one quote before =, +, -, @, tab, CR and a quote; the import removes exactly it', () => {
  const cases: Array<[string, string]> = [
    ['=SUM(A1)', "'=SUM(A1)"],
    ['+1', "'+1"],
    ['-x', "'-x"],
    ['@a', "'@a"],
    ['\tt', "'\tt"],
    ['\rr', "'\rr"],
    ["'q", "''q"],
    ["''", "'''"],
    ['plain', 'plain'],
    ['', ''],
    ['a=b', 'a=b'],
  ];
  for (const [text, guarded] of cases) {
    assert.equal(guardFormula(text), guarded, JSON.stringify(text));
    assert.equal(unguardFormula(guarded), text, JSON.stringify(guarded));
  }
  // A quote followed by anything else is the cell's own text.
  assert.equal(unguardFormula("'plain"), "'plain");
  assert.equal(unguardFormula("'"), "'");
});

void test('numbers are written as plain decimals that read back as the same number', () => {
  const cases: Array<[number, string]> = [
    [1e21, '1000000000000000000000'],
    [1.5e21, '1500000000000000000000'],
    [1e-7, '0.0000001'],
    [1.25e-7, '0.000000125'],
    [123.45, '123.45'],
    [0, '0'],
  ];
  for (const [value, text] of cases) {
    assert.equal(plainDecimal(value), text);
    assert.deepEqual(readCell('price', text), { absent: false, value });
  }
});

void test('reading cells: empty is absent, numeric columns take decimals, a decimal comma is an error that says so', () => {
  assert.deepEqual(readCell('price', null), { absent: true });
  assert.deepEqual(readCell('name', ''), { absent: false, value: '' });
  assert.deepEqual(readCell('sku', 7), { absent: false, value: '7' });
  assert.deepEqual(readCell('price', 12.5), { absent: false, value: 12.5 });
  assert.deepEqual(readCell('image_3_angle', ' 90 '), { absent: false, value: 90 });
  assert.deepEqual(
    readCell('price', 'abc'),
    { absent: false, value: 'abc' },
    'the service names the type error',
  );
  for (const text of ['1.299,00', '1,299', '1 299', '1.299.000', '12,5']) {
    const reading = readCell('price', text);
    assert.ok('error' in reading, text);
    assert.equal(
      reading.error,
      `${JSON.stringify(text)} is written with a decimal comma or thousands separators; ` +
        'write numbers as plain decimals with "." and no grouping, e.g. 1299.00',
    );
  }
});

void test('XLSX escapes: control characters and CR as _xHHHH_, a literal _xHHHH_ kept apart', () => {
  const text = 'a\r\nb\u0001c_x0041_d\te';
  const escaped = escapeXlsxText(text);
  assert.equal(escaped, 'a_x000D_\nb_x0001_c_x005F_x0041_d\te');
  assert.equal(unescapeXlsxText(escaped), text);
});

void test('the CSV separator: a comma, or a semicolon when the header row has no comma', () => {
  assert.equal(csvSeparator('external_id,name\r\na;b,c'), ',');
  assert.equal(csvSeparator('external_id;name\na,b'), ';');
  assert.equal(csvSeparator('external_id\n'), ',');
});
