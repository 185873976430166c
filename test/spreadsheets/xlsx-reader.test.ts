import { test } from 'node:test';
import assert from 'node:assert/strict';
import { strToU8, unzipSync, zipSync } from 'fflate';
import { bytesSource, type ByteSource } from '../../src/spreadsheets/byte-source.ts';
import { xlsxRows, type XlsxReadOptions } from '../../src/spreadsheets/xlsx-rows.ts';
import type { SheetRow } from '../../src/spreadsheets/csv-rows.ts';
import {
  buildXlsx,
  PRODUCERS,
  withLocalExtra,
  workbookParts,
  zipParts,
  type FixtureSheet,
  type Producer,
} from './xlsx-fixtures.ts';

/**
 * The XLSX reader (docs/spreadsheets.md, "The XLSX reader") on workbooks laid out as their producers
 * lay them out (`xlsx-fixtures.ts`): part orders, cell types, zip forms, and text whose characters
 * fall across every boundary of the pieces the file is read and inflated in.
 */

async function rowsOf(bytes: Uint8Array | ByteSource, options?: XlsxReadOptions): Promise<SheetRow[]> {
  const rows: SheetRow[] = [];
  for await (const row of xlsxRows(bytes instanceof Uint8Array ? bytesSource(bytes) : bytes, options))
    rows.push(row);
  return rows;
}

/** A source that answers at most `most` bytes per read: every read is a short read. */
function tinyReads(bytes: Uint8Array, most: number): ByteSource {
  const source = bytesSource(bytes);
  return { size: source.size, read: (offset, length) => source.read(offset, Math.min(length, most)) };
}

const NAME = 'LOBERGET / BLYSKÄR, white';
const OTHER = 'ÄPPLARÖ 😀 桌子 Ωmega';

/** A sheet with every cell type the reader takes, an absent row, a styled empty cell, an escape. */
const CATALOG: FixtureSheet = {
  name: 'Catalog',
  rows: [
    ['external_id', 'name', 'price', 'in_stock'],
    [NAME, OTHER, 1299.5, true],
    [],
    [
      { rich: ['BLYSK', 'ÄR'], phonetic: 'ブリスケア' },
      { formula: 'A2&" x"', text: 'calc ÄR' },
      { error: '#N/A' },
      { date: '2026-01-02T00:00:00Z' },
    ],
    [{ styledEmpty: true }, '', 0, false],
    [{ styledEmpty: true }],
    ['line_x000D_break _x005F_x0041_'],
  ],
};

const EXPECTED: SheetRow[] = [
  { row: 1, cells: ['external_id', 'name', 'price', 'in_stock'] },
  { row: 2, cells: [NAME, OTHER, 1299.5, 'TRUE'] },
  { row: 4, cells: ['BLYSKÄR', 'calc ÄR', '#N/A', '2026-01-02T00:00:00Z'] },
  { row: 5, cells: [null, '', 0, 'FALSE'] },
  { row: 7, cells: ['line\rbreak _x0041_'] },
];

const OTHER_SHEET: FixtureSheet = { name: 'Notes', rows: [['not this sheet']] };

/** The names of a zip's entries in the order it holds them. */
const entryOrder = (bytes: Uint8Array) => Object.keys(unzipSync(bytes));

void test('every producer layout reads to the same rows', async () => {
  for (const producer of Object.keys(PRODUCERS) as Producer[]) {
    const bytes = buildXlsx([CATALOG, OTHER_SHEET], producer);
    assert.deepEqual(await rowsOf(bytes), EXPECTED, producer);
  }
});

void test('shared strings after the sheet (LibreOffice, XlsxWriter, exceljs streaming): no text lost', async () => {
  for (const producer of ['libreoffice', 'xlsxwriter', 'exceljsStream'] as const) {
    const bytes = buildXlsx([CATALOG], producer);
    const order = entryOrder(bytes);
    assert.ok(
      order.indexOf('xl/worksheets/sheet1.xml') < order.indexOf('xl/sharedStrings.xml'),
      `${producer}: ${order.join(', ')}`,
    );
    assert.deepEqual(await rowsOf(bytes), EXPECTED, producer);
  }
  assert.deepEqual(entryOrder(buildXlsx([CATALOG], 'libreoffice')), [
    '_rels/.rels',
    'xl/workbook.xml',
    'xl/styles.xml',
    'xl/worksheets/sheet1.xml',
    'xl/_rels/workbook.xml.rels',
    'xl/sharedStrings.xml',
    'docProps/core.xml',
    '[Content_Types].xml',
  ]);
});

void test('the first tab is read, whichever part holds it and however its target is written', async () => {
  for (const absoluteTargets of [false, true]) {
    // The workbook lists Catalog first; its part is sheet2.xml, and sheet1.xml is the second tab.
    const bytes = buildXlsx([CATALOG, OTHER_SHEET], 'excel', {
      sheetFiles: ['sheet2.xml', 'sheet1.xml'],
      absoluteTargets,
    });
    assert.deepEqual(await rowsOf(bytes), EXPECTED, `absolute targets: ${absoluteTargets}`);
    const reversed = buildXlsx([OTHER_SHEET, CATALOG], 'excel', {
      sheetFiles: ['sheet2.xml', 'sheet1.xml'],
      absoluteTargets,
    });
    assert.deepEqual(await rowsOf(reversed), [{ row: 1, cells: ['not this sheet'] }]);
  }
  // The shared strings found by their relationship, not their usual name.
  const moved = buildXlsx([CATALOG], 'excel', { sharedStringsName: 'strings/table.xml' });
  assert.ok(entryOrder(moved).includes('xl/strings/table.xml'));
  assert.deepEqual(await rowsOf(moved), EXPECTED);
});

void test('inline strings, t="str" texts, prefixed elements, rows and cells without r', async () => {
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], 'xlsxwriterConstantMemory')), EXPECTED);
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], 'exceljsStreamNoSharedStrings')), EXPECTED);
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG, OTHER_SHEET], 'excel', { prefix: 'x' })), EXPECTED);
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], 'xlsxwriterConstantMemory', { prefix: 'x' })), EXPECTED);
  // Without r, a row follows the row before it and a cell the cell before it: the absent row 3 is not
  // written, so the later rows are numbered one less.
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], 'excel', { noReferences: true })), [
    EXPECTED[0],
    EXPECTED[1],
    { ...EXPECTED[2], row: 3 },
    { ...EXPECTED[3], row: 4 },
    { ...EXPECTED[4], row: 6 },
  ]);
});

void test('cells placed by their reference: gaps are empty cells, a cell without r follows the one before', async () => {
  const sheet =
    '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
    '<row r="1"><c r="C1" t="inlineStr"><is><t>c</t></is></c><c t="inlineStr"><is><t>d</t></is></c><c r="AA1"><v>27</v></c></row>' +
    '<row r="3" spans="1:2"><c r="b3" t="b"><v>0</v></c></row><row><c r="A4"><v>1e21</v></c><c r="B4"><f>SUM(A1)</f></c></row>' +
    '</sheetData></worksheet>';
  const parts = workbookParts([{ name: 'S', rows: [] }], PRODUCERS.xlsxwriterConstantMemory).map(
    ([name, text]): [string, string] => [name, name === 'xl/worksheets/sheet1.xml' ? sheet : text],
  );
  assert.deepEqual(await rowsOf(zipParts(parts)), [
    { row: 1, cells: [null, null, 'c', 'd', ...Array<null>(22).fill(null), 27] },
    { row: 3, cells: [null, 'FALSE'] },
    { row: 4, cells: [1e21] },
  ]);
});

void test('zip forms: data descriptors, stored entries, directory entries, a local extra field longer than the central one', async () => {
  const layout = { ...PRODUCERS.excel };
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], { ...layout, dataDescriptors: true })), EXPECTED);
  assert.deepEqual(
    await rowsOf(buildXlsx([CATALOG], { ...layout, dataDescriptors: true }, { stored: true })),
    EXPECTED,
  );
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], layout, { stored: true })), EXPECTED);
  assert.deepEqual(await rowsOf(buildXlsx([CATALOG], 'exceljs')), EXPECTED);
  // Info-ZIP's extended timestamp (0x5455) with modification, access and creation times locally.
  const extended = new Uint8Array([0x55, 0x54, 13, 0, 7, ...Array<number>(12).fill(1)]);
  assert.deepEqual(await rowsOf(withLocalExtra(buildXlsx([CATALOG], layout), extended)), EXPECTED);
});

void test('non-ASCII text across every boundary of the pieces read and inflated', async () => {
  const text = ['ÄPPLARÖ', 'BLYSKÄR', '😀🪑', '桌子椅子', 'Ωmega ß', NAME].join(' ');
  const sheet: FixtureSheet = { name: 'S', rows: [['name'], [text], [`${text} 2`]] };
  const expected = [
    { row: 1, cells: ['name'] },
    { row: 2, cells: [text] },
    { row: 3, cells: [`${text} 2`] },
  ];
  for (const producer of ['libreoffice', 'xlsxwriterConstantMemory'] as const) {
    // Stored: the file's pieces are the decoder's pieces, so 1 to 8 bytes split every character
    // (of 2, 3 and 4 bytes) at every place; short reads of 1 to 3 bytes split them again.
    const stored = buildXlsx([sheet], producer, { stored: true });
    for (let pieceBytes = 1; pieceBytes <= 8; pieceBytes++) {
      assert.deepEqual(await rowsOf(stored, { pieceBytes }), expected, `${producer} stored, ${pieceBytes}`);
    }
    for (let most = 1; most <= 3; most++) {
      assert.deepEqual(
        await rowsOf(tinyReads(stored, most), { pieceBytes: 7 }),
        expected,
        `${producer}, reads of ${most}`,
      );
    }
    // Deflated: the inflater's output comes in pieces as its input does.
    const deflated = buildXlsx([sheet], producer);
    for (let pieceBytes = 1; pieceBytes <= 16; pieceBytes++) {
      assert.deepEqual(
        await rowsOf(deflated, { pieceBytes }),
        expected,
        `${producer} deflated, ${pieceBytes}`,
      );
    }
    assert.deepEqual(await rowsOf(tinyReads(deflated, 2)), expected, `${producer} deflated, reads of 2`);
  }
});

void test('a part in UTF-16 (with its byte order mark) reads as the same text', async () => {
  const parts = workbookParts([CATALOG], PRODUCERS.xlsxwriterConstantMemory).map(
    ([name, text]): [string, string | Uint8Array] =>
      name === 'xl/worksheets/sheet1.xml'
        ? [name, new Uint8Array(Buffer.from(`\uFEFF${text.replace('UTF-8', 'UTF-16')}`, 'utf16le'))]
        : [name, text],
  );
  assert.deepEqual(await rowsOf(zipParts(parts)), EXPECTED);
});

/** `bytes` with the 32-bit value at `at` set to `value`. */
function patched(bytes: Uint8Array, at: number, value: number, size: 2 | 4 = 4): Uint8Array {
  const copy = bytes.slice();
  const view = new DataView(copy.buffer);
  if (size === 4) view.setUint32(at, value, true);
  else view.setUint16(at, value | view.getUint16(at, true), true);
  return copy;
}

/** The offset of every central directory header of `zip`, by the entry's name. */
function centralHeaders(zip: Uint8Array): Map<string, number> {
  const view = new DataView(zip.buffer, zip.byteOffset);
  const end = zip.length - 22;
  let at = view.getUint32(end + 16, true);
  const found = new Map<string, number>();
  while (at < end && view.getUint32(at, true) === 0x02014b50) {
    found.set(Buffer.from(zip.subarray(at + 46, at + 46 + view.getUint16(at + 28, true))).toString(), at);
    at += 46 + view.getUint16(at + 28, true) + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return found;
}

void test('a file that is not a workbook this reads: the message says why', async () => {
  const refused = async (bytes: Uint8Array, reason: string) =>
    assert.rejects(rowsOf(bytes), {
      name: 'XlsxReadError',
      message: `it is not an XLSX workbook that can be read (${reason})`,
    });
  const good = buildXlsx([CATALOG], 'excel', { stored: true });

  await refused(
    strToU8('external_id,name\nsofa-1,Sofa\n'),
    'it is not a zip file: no end of central directory record',
  );
  await refused(new Uint8Array(0), 'it is not a zip file: too short');
  await refused(
    good.subarray(0, good.length - 10),
    'it is not a zip file: no end of central directory record',
  );
  await refused(zipSync({ 'notes.txt': strToU8('hello') }), 'it has no workbook part (xl/workbook.xml)');
  await refused(
    zipSync({
      '_rels/.rels': strToU8(
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
      ),
      'word/document.xml': strToU8(
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>',
      ),
    }),
    "its main part is a <document>, not a spreadsheet's <workbook>",
  );
  // ZIP64: the directory's offset saturated, its real value in a ZIP64 record.
  await refused(
    patched(good, good.length - 22 + 16, 0xffffffff),
    'the zip is in ZIP64 form, which this reader does not read; save it again',
  );
  // Encrypted: bit 0 of every entry's flags.
  let encrypted = good;
  for (const at of centralHeaders(good).values()) encrypted = patched(encrypted, at + 8, 1, 2);
  await refused(encrypted, 'its part _rels/.rels is encrypted');
  // A byte of a stored text changed: the CRC-32 tells it.
  const damaged = good.slice();
  const at = Buffer.from(damaged).indexOf('LOBERGET');
  damaged[at] = 'X'.charCodeAt(0);
  await refused(damaged, 'its part xl/sharedStrings.xml is damaged: its CRC-32 does not match');
  // Deflated data cut short inside the file.
  const deflated = buildXlsx([CATALOG], 'excel');
  const sheetAt = centralHeaders(deflated).get('xl/worksheets/sheet1.xml')!;
  await refused(
    patched(deflated, sheetAt + 20, new DataView(deflated.buffer).getUint32(sheetAt + 20, true) - 40),
    'its part xl/worksheets/sheet1.xml is damaged: unexpected EOF',
  );
  // Latin-1 bytes in a part: refused, never read as U+FFFD.
  const latin1 = workbookParts([CATALOG], PRODUCERS.xlsxwriterConstantMemory).map(
    ([name, text]): [string, string | Uint8Array] =>
      name === 'xl/worksheets/sheet1.xml'
        ? [name, new Uint8Array(Buffer.from(text, 'latin1'))]
        : [name, text],
  );
  await refused(zipParts(latin1), 'its part xl/worksheets/sheet1.xml is not UTF-8 text');
  // A text cell naming a shared string the table does not hold.
  const parts = workbookParts([CATALOG], PRODUCERS.excel).map(([name, text]): [string, string] => [
    name,
    name === 'xl/worksheets/sheet1.xml' ? text.replace('<v>0</v>', '<v>99</v>') : text,
  ]);
  await refused(zipParts(parts), 'cell A1 names shared string 99, which the workbook does not hold');
  // XML that is not well-formed.
  const broken = workbookParts([CATALOG], PRODUCERS.excel).map(([name, text]): [string, string] => [
    name,
    name === 'xl/worksheets/sheet1.xml' ? text.replace('</sheetData>', '</sheetdata>') : text,
  ]);
  await assert.rejects(rowsOf(zipParts(broken)), {
    name: 'XlsxReadError',
    message:
      /^it is not an XLSX workbook that can be read \(its part xl\/worksheets\/sheet1\.xml is not well-formed XML: .*\)$/,
  });
});
