import assert from 'node:assert/strict';
import { test } from 'node:test';
import { csvEncodingRefusal, csvRows, csvSeparator } from '../../src/spreadsheets/csv-rows.ts';
import { readHeader, SheetLayoutError } from '../../src/spreadsheets/sheet-layout.ts';
import {
  decodeText,
  encodingOfLabel,
  TextEncodingError,
  type EncodingAdvice,
} from '../../src/spreadsheets/text-encoding.ts';
import { utf8DefectAt } from '../../src/runtime/utf8-defect.ts';
import { pieces, utf16, utf8, windows1252 } from './encoding-fixtures.ts';

/** docs/spreadsheets.md#encodings: the shared decoder of the command-line client and the dashboard. */

const ADVICE: EncodingAdvice = {
  save: 'Save the file as "CSV UTF-8"',
  choose: 'pass --encoding windows-1252',
  chosen: 'Pass the encoding the file is written in with --encoding',
};

/** Every piece size that puts a boundary inside each character of up to four bytes, and one piece. */
const SIZES = [1, 2, 3, 5, 7, 1 << 20];

async function decodeAll(
  bytes: Uint8Array,
  size: number,
  encoding?: string,
): Promise<{ text: string; error?: TextEncodingError }> {
  let text = '';
  try {
    for await (const piece of decodeText(pieces(bytes, size), { encoding, advice: ADVICE })) text += piece;
    return { text };
  } catch (error) {
    assert.ok(error instanceof TextEncodingError, String(error));
    return { text, error };
  }
}

const SAMPLE = 'external_id,name\nsofa-1,Café sofa – 3 seater 😀 €\n';

void test('UTF-8 with and without BOM, UTF-16 LE and BE with BOM decode exactly, cut anywhere', async () => {
  const forms: Array<[string, Uint8Array]> = [
    ['utf-8', utf8(SAMPLE)],
    ['utf-8 BOM', utf8(SAMPLE, { bom: true })],
    ['utf-16le BOM', utf16(SAMPLE, 'le')],
    ['utf-16be BOM', utf16(SAMPLE, 'be')],
  ];
  for (const [name, bytes] of forms)
    for (const size of SIZES)
      assert.deepEqual(await decodeAll(bytes, size), { text: SAMPLE }, `${name} ${size}`);
});

void test('a chosen encoding: Windows-1252 and UTF-16LE without BOM; a byte order mark wins over the choice', async () => {
  const text = 'Café sofa – 3 seater, € 12';
  for (const size of SIZES) {
    assert.deepEqual(await decodeAll(windows1252(text), size, 'windows-1252'), { text });
    assert.deepEqual(await decodeAll(windows1252(text), size, 'latin1'), { text });
    assert.deepEqual(await decodeAll(utf16(text, 'le', { bom: false }), size, 'utf-16le'), { text });
    assert.deepEqual(await decodeAll(utf8(text, { bom: true }), size, 'windows-1252'), { text });
  }
});

void test('Windows-1252 read as UTF-8 is refused at its first byte, with the text before it, cut anywhere', async () => {
  const bytes = windows1252('abc\nCafé – €');
  for (const size of SIZES) {
    const { text, error } = await decodeAll(bytes, size);
    assert.equal(text, 'abc\nCaf', `size ${size}`);
    assert.equal(
      error?.message,
      'byte 0xE9 at offset 7 is not UTF-8. Save the file as "CSV UTF-8" or pass --encoding windows-1252',
    );
  }
});

void test('ill-formed UTF-8 and UTF-16 name the first byte of the defect, mid-file and at the end', async () => {
  const cases: Array<[string, Uint8Array, string, string?]> = [
    // A lead byte whose continuation is missing, after a 4-byte character.
    ['lead', Uint8Array.from([...utf8('😀x'), 0xe2, 0x80, 0x41]), 'byte 0xE2 at offset 5'],
    ['stray continuation', Uint8Array.from([...utf8('é'), 0x96]), 'byte 0x96 at offset 2'],
    ['overlong', Uint8Array.from([0x41, 0xc0, 0xaf]), 'byte 0xC0 at offset 1'],
    ['surrogate', Uint8Array.from([0x41, 0xed, 0xa0, 0x80]), 'byte 0xED at offset 1'],
    ['cut at the end', Uint8Array.from([...utf8('ab'), 0xf0, 0x9f, 0x98]), 'byte 0xF0 at offset 2'],
    [
      'lone high surrogate',
      Uint8Array.from([...utf16('a', 'le'), 0x3d, 0xd8, 0x62, 0x00]),
      'bytes 0x3D 0xD8 at offset 4',
    ],
    ['lone low surrogate', Uint8Array.from([...utf16('a', 'be'), 0xde, 0x00]), 'bytes 0xDE 0x00 at offset 4'],
    ['odd length', Uint8Array.from([...utf16('ab', 'le'), 0x63]), 'byte 0x63 at offset 6'],
    ['shift_jis cut', Uint8Array.from([0x82, 0xa0, 0x41, 0x81]), 'byte 0x81 at offset 3', 'shift_jis'],
  ];
  for (const [name, bytes, says, encoding] of cases)
    for (const size of SIZES) {
      const { error } = await decodeAll(bytes, size, encoding);
      assert.ok(error, `${name} ${size}`);
      assert.equal(error.message.slice(0, error.message.indexOf(' is not')), says, `${name} ${size}`);
    }
});

void test('utf8DefectAt agrees with a fatal TextDecoder on every short byte sequence', () => {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const interesting = [
    0x00, 0x41, 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff,
  ];
  for (const a of interesting)
    for (const b of interesting)
      for (const c of interesting) {
        const bytes = Uint8Array.from([a, b, c]);
        let valid = true;
        try {
          decoder.decode(bytes);
        } catch {
          valid = false;
        }
        assert.equal(utf8DefectAt(bytes) === -1, valid, `${a} ${b} ${c}`);
      }
});

void test('encoding labels: WHATWG names and aliases; unknown and "replacement" labels are none', () => {
  assert.equal(encodingOfLabel('Windows-1252'), 'windows-1252');
  assert.equal(encodingOfLabel('latin1'), 'windows-1252');
  assert.equal(encodingOfLabel('ISO-8859-15'), 'iso-8859-15');
  assert.equal(encodingOfLabel('utf-16le'), 'utf-16le');
  assert.equal(encodingOfLabel('shift_jis'), 'shift_jis');
  assert.equal(encodingOfLabel('cp1252-ish'), null);
  assert.equal(encodingOfLabel('iso-2022-kr'), null);
});

void test('csvSeparator: comma; semicolon when the header has no comma; tab when it has neither', () => {
  assert.equal(csvSeparator('external_id,name\ta'), ',');
  assert.equal(csvSeparator('external_id;name\ta'), ';');
  assert.equal(csvSeparator('external_id\tname\na,b;c'), '\t');
  assert.equal(csvSeparator('external_id\n'), ',');
});

async function csvOf(bytes: Uint8Array, size: number, encoding?: string) {
  const rows = [];
  for await (const row of csvRows(decodeText(pieces(bytes, size), { encoding, advice: ADVICE })))
    rows.push(row);
  return rows;
}

void test("Excel's Unicode Text (UTF-16LE, BOM, tabs) reads as its rows, cut anywhere", async () => {
  const text = 'external_id\tname\tdescription\r\nsofa-1\tCafé sofa – 3 seater\t"a ""quoted""\tcell"\r\n';
  for (const size of [1, 3, 1 << 20])
    assert.deepEqual(await csvOf(utf16(text, 'le'), size), [
      { row: 1, cells: ['external_id', 'name', 'description'] },
      { row: 2, cells: ['sofa-1', 'Café sofa – 3 seater', 'a "quoted"\tcell'] },
    ]);
});

/** The refusal a CSV's reading ends with, placed by reading the text before the byte again. */
async function refusalOf(bytes: Uint8Array, size: number): Promise<string> {
  try {
    await csvOf(bytes, size);
  } catch (error) {
    assert.ok(error instanceof TextEncodingError);
    const placed = await csvEncodingRefusal(error, () =>
      decodeText(pieces(bytes.subarray(0, error.offset), size), { encoding: error.encoding, advice: ADVICE }),
    );
    assert.ok(placed instanceof SheetLayoutError);
    return placed.message;
  }
  assert.fail('read without a refusal');
}

void test('a byte that is not UTF-8 is placed by row and column: in a cell, a quoted multi-line cell, the header, a row start', async () => {
  const advice = 'is not UTF-8. Save the file as "CSV UTF-8" or pass --encoding windows-1252';
  // Everything before the é is ASCII: its offset is its index.
  const cases: Array<[string, string]> = [
    ['external_id,name,sku\na,b,c\nsofa-1,Café,x\n', 'row 3, column "name"'],
    ['external_id;name;description\na;"line\nCafé";x\n', 'row 2, column "name"'],
    ['external_id,naé\n', 'row 1, column "na"'],
    ['external_id,name\r\na,b\r\né,x\r\n', 'row 3, column "external_id"'],
  ];
  for (const [text, where] of cases)
    for (const size of [1, 2, 3, 1 << 20])
      assert.equal(
        await refusalOf(windows1252(text), size),
        `${where}: byte 0xE9 at offset ${text.indexOf('é')} ${advice}`,
        `${size}`,
      );
});

void test('a header that starts with ï»¿ (UTF-8 read as Latin-1 and written again) is refused saying so', () => {
  assert.throws(
    () => readHeader(['\u00EF\u00BB\u00BFexternal_id', 'name']),
    (error: unknown) =>
      error instanceof SheetLayoutError &&
      error.row === 1 &&
      error.column === 'ï»¿external_id' &&
      /UTF-8 that another program read as Latin-1/.test(error.message) &&
      /Character set "Unicode \(UTF-8\)"/.test(error.message) &&
      /save it as "CSV UTF-8"/.test(error.message),
  );
});
