import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { strFromU8, unzipSync } from 'fflate';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertProblem, ingest, storedProduct, withoutTimestamps } from '../helpers/assertions.ts';
import { catalogOf, EXPORT_PATH, importItems, requestExport } from '../export/export-helpers.ts';
import { SHEET_COLUMNS } from '../../src/spreadsheets/sheet-layout.ts';
import { xlsxRows } from '../../src/spreadsheets/xlsx-rows.ts';
import { bytesSource } from '../../src/spreadsheets/byte-source.ts';
import { csvBody, csvItems, XLSX_TYPE, xlsxBody, xlsxItems } from './sheet-helpers.ts';

/** `GET /products/export` as CSV and XLSX (docs/reference.md §11.4, §11.5): layout, guard, cells, round trip. */

const svc = testServiceForFile();

const images = (sku: string, count: number, angle?: (n: number) => number | null) =>
  Array.from({ length: count }, (_, n) => {
    const url = `https://cdn.example/${sku}/${n}.jpg`;
    return angle === undefined ? { url } : { url, angle: angle(n) };
  });

/** A catalog with what a spreadsheet would mangle: formulas, quotes, newlines, control characters, zeros. */
function trickyCatalog(): Array<Record<string, unknown>> {
  return [
    product({
      external_id: '00017',
      name: '=HYPERLINK("https://evil.example","click")',
      description: 'line one\r\nline two, "quoted"; tab\there\u0001 and _x0041_ literally',
      variants: [
        variant({
          sku: '007',
          name: '+44 sofa',
          brand: '',
          price: 1e21,
          images: images('007', 3, (n) => n * 90),
        }),
        variant({ sku: '-minus', name: "'quoted", brand: '@brand', depth: 0.1, images: undefined }),
      ],
    }),
    product({ external_id: 'z-last', description: '', variants: [variant({ sku: 'z1', name: '\tTabbed' })] }),
  ];
}

void test('CSV: the header, a row per variant, product cells on the first row, guarded formulas, "" for empty text', async () => {
  const token = await svc.token(svc.tenant('sheet-csv'));
  await ingest(svc, token, [
    product({
      external_id: 'p1',
      name: '=1+2',
      description: '',
      variants: [
        variant({
          sku: 'a',
          name: '-x',
          brand: "'b",
          price: 1e21,
          images: [{ url: 'https://c.example/1.jpg', angle: 90 }],
        }),
        variant({
          sku: 'b',
          name: 'plain, "quoted"\nsecond line',
          images: [{ url: 'https://c.example/2.jpg' }],
        }),
      ],
    }),
  ]);
  const body = csvBody(await requestExport(svc, token, { accept: 'text/csv' }));
  const empty = (n: number) => ','.repeat(n);
  assert.equal(
    body,
    `\uFEFF${SHEET_COLUMNS.join(',')}\r\n` +
      `p1,'=1+2,"",Modern,Sofas & Loveseats,Sofa,a,'-x,https://shop.example/sofa,95.5,82,214,61.2,Beige,` +
      `1000000000000000000000,''b,https://c.example/1.jpg,90${empty(18)}\r\n` +
      `p1,,,,,,b,"plain, ""quoted""\nsecond line",https://shop.example/sofa,95.5,82,214,61.2,Beige,1299.99,Northwind,` +
      `https://c.example/2.jpg,${empty(18)}\r\n`,
  );
});

void test('CSV and XLSX round trip: an export ingested into an empty tenant gives the same products', async () => {
  const items = trickyCatalog();
  // A variant with 23 images stored (merged over three items): exported over three rows.
  const many = product({
    external_id: 'many',
    variants: [variant({ sku: 'm', images: images('m', 10, (n) => n) })],
  });
  const more = (from: number, count: number) =>
    product({
      ...many,
      variants: [variant({ sku: 'm', images: images('m', from + count).slice(from) })],
    });
  const source = await svc.token(svc.tenant('sheet-trip-source'));
  await ingest(svc, source, [...items, many]);
  await ingest(svc, source, [more(10, 10)]);
  await ingest(svc, source, [more(20, 3)]);
  const original = await catalogOf(svc, source);

  const csv = await csvItems(csvBody(await requestExport(svc, source, { accept: 'text/csv' })));
  const xlsx = await xlsxItems(xlsxBody(await requestExport(svc, source, { accept: XLSX_TYPE })));
  assert.equal(csv.length, 5, 'three products, and two more items for the 13 images past the first 10');
  assert.deepEqual(xlsx, csv);
  for (const [form, fileItems] of [
    ['csv', csv],
    ['xlsx', xlsx],
  ] as const) {
    const copy = await svc.token(svc.tenant(`sheet-trip-${form}`));
    await importItems(svc, copy, fileItems);
    assert.deepEqual(await catalogOf(svc, copy), original, form);
    for (const id of ['00017', 'z-last', 'many']) {
      assert.deepEqual(
        withoutTimestamps(await storedProduct(svc, copy, id)),
        withoutTimestamps(await storedProduct(svc, source, id)),
        `${form} ${id}`,
      );
    }
  }
});

void test('XLSX: texts are shared strings in text-formatted columns, numbers numeric cells, control characters escaped', async () => {
  const token = await svc.token(svc.tenant('sheet-xlsx-cells'));
  await ingest(svc, token, trickyCatalog());
  const bytes = xlsxBody(await requestExport(svc, token, { accept: XLSX_TYPE }));
  const parts = unzipSync(bytes);
  assert.deepEqual(Object.keys(parts), [
    '[Content_Types].xml',
    '_rels/.rels',
    'xl/workbook.xml',
    'xl/_rels/workbook.xml.rels',
    'xl/styles.xml',
    'xl/worksheets/sheet1.xml',
    'xl/sharedStrings.xml',
  ]);
  const sheetXml = strFromU8(parts['xl/worksheets/sheet1.xml']!);
  const tableXml = strFromU8(parts['xl/sharedStrings.xml']!);
  // Shared strings, never inline ones (which Apple Numbers does not show) nor formula results
  // (`t="str"`, whose escapes LibreOffice shows as written).
  assert.deepEqual([...new Set(sheetXml.match(/ t="[^"]*"/g))], [' t="s"']);
  const entries = [...tableXml.matchAll(/<si><t xml:space="preserve">([^<]*)<\/t><\/si>/g)].map((m) => m[1]);
  const references = sheetXml.match(/ t="s"/g)!.length;
  assert.ok(
    tableXml.includes(`count="${references}" uniqueCount="${entries.length}">`),
    'the table counts its references and entries',
  );
  assert.equal(
    new Set(entries.filter((e) => e!.length <= 40)).size,
    entries.filter((e) => e!.length <= 40).length,
  );
  const shared = (ref: string) => {
    const index = new RegExp(`<c r="${ref}" s="1" t="s"><v>(\\d+)</v></c>`).exec(sheetXml)?.[1];
    assert.ok(index !== undefined, `cell ${ref} is a shared string`);
    return entries[Number(index)];
  };
  assert.equal(
    shared('C2'),
    'line one_x000D_\nline two, "quoted"; tab\there_x0001_ and _x005F_x0041_ literally',
  );
  assert.equal(shared('A2'), '00017');
  assert.ok(sheetXml.includes('<c r="O2"><v>1e+21</v></c>'), 'a number is a numeric cell');
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.read(Readable.from([bytes]));
  const sheet = workbook.worksheets[0]!;
  const cell = (row: number, column: string) => sheet.getRow(row).getCell(SHEET_COLUMNS.indexOf(column) + 1);
  assert.equal(sheet.rowCount, 4);
  assert.equal(cell(2, 'external_id').value, '00017');
  assert.equal(cell(2, 'sku').value, '007');
  assert.equal(cell(2, 'sku').numFmt, '@');
  assert.equal(
    cell(2, 'name').value,
    '=HYPERLINK("https://evil.example","click")',
    'a text cell: no guard, no formula',
  );
  // An empty text cell, which the streaming reader of the import tells from an empty cell.
  const rows = [];
  for await (const row of xlsxRows(bytesSource(bytes))) rows.push(row);
  assert.deepEqual(
    rows.map(({ row, cells }) => [row, cells[SHEET_COLUMNS.indexOf('brand')]]),
    [
      [1, 'brand'],
      [2, ''],
      [3, '@brand'],
      [4, 'Northwind'],
    ],
  );
  assert.equal(cell(2, 'price').type, ExcelJS.ValueType.Number);
  assert.equal(cell(2, 'price').value, 1e21);
  // exceljs undoes the escapes of a shared string (it left an inline string's as written).
  assert.equal(
    cell(2, 'description').value,
    'line one\r\nline two, "quoted"; tab\there\u0001 and _x0041_ literally',
  );
  assert.equal(cell(2, 'image_3_angle').value, 180);
  assert.equal(cell(3, 'name').value, null, 'product cells only on its first row');
  assert.equal(cell(3, 'external_id').value, '00017');
});

void test('an XLSX export holding a text over 32,767 characters: 422 naming the product, before any byte; CSV carries it', async () => {
  const token = await svc.token(svc.tenant('sheet-long'));
  const long = 'x'.repeat(32_768);
  await ingest(svc, token, [
    product({ external_id: 'a-fits', description: 'x'.repeat(32_767) }),
    product({ external_id: 'b-long', variants: [variant({ sku: 'b1', brand: long })] }),
    product({ external_id: 'c-long', description: long }),
  ]);
  const res = await requestExport(svc, token, { accept: XLSX_TYPE });
  const problem = assertProblem(res, { slug: 'validation-error', instance: EXPORT_PATH, status: 422 });
  assert.equal(
    problem.detail,
    'Product "b-long" holds a text longer than 32767 characters, more than an XLSX cell holds; ' +
      'export it as CSV or NDJSON, which carry it in full.',
  );
  const fits = await requestExport(svc, token, { accept: XLSX_TYPE, query: '?prefix=a-' });
  assert.equal((await xlsxItems(xlsxBody(fits))).length, 1);
  const csv = await csvItems(csvBody(await requestExport(svc, token, { accept: 'text/csv' })));
  assert.deepEqual(
    csv.map((item) => (item as { variants: Array<{ brand: string }> }).variants[0]!.brand.length),
    [9, long.length, 9],
  );
});
