import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { csvRows, type SheetRow } from '../../src/spreadsheets/csv-rows.ts';
import type { SheetCell } from '../../src/spreadsheets/sheet-cells.ts';
import { propertyRuns } from '../helpers/catalog-arbitraries.ts';

/**
 * The CSV reader's cells (docs/reference.md §11.5): an empty field is an empty cell (null), a quoted empty
 * field `""` the empty string, wherever it stands in the record and whatever quoted text is before
 * it. The reader tells them apart from the record's raw text (src/spreadsheets/csv-rows.ts).
 */

async function rowsOf(chunks: string[]): Promise<SheetRow[]> {
  const rows: SheetRow[] = [];
  for await (const row of csvRows(
    (async function* () {
      yield* chunks;
    })(),
  )) {
    rows.push(row);
  }
  return rows;
}

void test('quoted empty fields are empty strings, unquoted ones empty cells, after quotes, separators and line breaks', async () => {
  const text =
    '\uFEFFa,b,c,d,e\r\n' +
    '"",,"x ""y""",,""\r\n' +
    '"multi\r\nline, with ""quotes""","",plain,,"\'=1"\r\n' +
    ',,,,\r\n' +
    '"""",""""""," , ","",\r\n' +
    'é,"",ü,"""""",\r\n';
  const rows = await rowsOf([text.slice(0, 17), text.slice(17, 40), text.slice(40)]);
  assert.deepEqual(rows, [
    { row: 1, cells: ['a', 'b', 'c', 'd', 'e'] },
    { row: 2, cells: ['', null, 'x "y"', null, ''] },
    { row: 3, cells: ['multi\r\nline, with "quotes"', '', 'plain', null, '=1'] },
    { row: 4, cells: [null, null, null, null, null] },
    { row: 5, cells: ['"', '""', ' , ', '', null] },
    { row: 6, cells: ['é', '', 'ü', '""', null] },
  ]);
});

void test('with ";" as the separator, and a record with no line break at its end', async () => {
  const rows = await rowsOf(['a;b;c\n"x;y";"";\n;"";""']);
  assert.deepEqual(rows, [
    { row: 1, cells: ['a', 'b', 'c'] },
    { row: 2, cells: ['x;y', '', null] },
    { row: 3, cells: [null, '', ''] },
  ]);
});

/** A field as a test writes it: its text, and whether it is written quoted. */
const fieldArb = fc.oneof(
  fc.constant({ text: '', quoted: false }),
  fc.constant({ text: '', quoted: true }),
  fc.record({ text: fc.string({ minLength: 1, maxLength: 6 }), quoted: fc.constant(true) }),
  fc.record({
    text: fc.stringMatching(/^[a-z0-9 .é]{1,6}$/),
    quoted: fc.boolean(),
  }),
);

void test('any record: each cell is its field, "" an empty string and an empty field null', async (t) => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(',', ';'),
      fc.array(fc.array(fieldArb, { minLength: 3, maxLength: 8 }), { minLength: 1, maxLength: 6 }),
      fc.integer({ min: 1, max: 40 }),
      async (separator, records, chunkSize) => {
        // The header decides the separator: a "," in it means ",".
        const header = separator === ',' ? 'h1,h2' : 'h1;h2';
        const written = records.map((fields) =>
          fields
            .map(({ text, quoted }) => (quoted ? `"${text.replaceAll('"', '""')}"` : text))
            .join(separator),
        );
        const text = [header, ...written].join('\r\n') + '\r\n';
        const chunks: string[] = [];
        for (let at = 0; at < text.length; at += chunkSize) chunks.push(text.slice(at, at + chunkSize));
        const rows = await rowsOf(chunks);
        const expected: SheetCell[][] = records.map((fields) =>
          fields.map(({ text, quoted }) => (text === '' && !quoted ? null : unguarded(text))),
        );
        assert.deepEqual(
          rows.slice(1).map((row) => row.cells),
          expected,
        );
      },
    ),
    propertyRuns(t, 300),
  );
});

/** What the import makes of a guarded cell (`'=x` → `=x`); the generated texts rarely hold one. */
function unguarded(text: string): string {
  return /^'[=+\-@\t\r']/.test(text) ? text.slice(1) : text;
}

void test('a quoting error in the last chunk is thrown, also when the input ends a turn after it (as a file does)', async () => {
  const rows = csvRows(
    (async function* () {
      yield 'a,b\nx,1"2\n';
      // A file's end is known only after more I/O, once the parser's error has been emitted.
      await new Promise((resolve) => setImmediate(resolve));
    })(),
  );
  await assert.rejects(async () => {
    for await (const _row of rows);
  }, /Invalid Opening Quote|Quote/i);
});
