import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { ingest } from '../helpers/assertions.ts';
import {
  convertWithLibreOffice as convert,
  CSV_EXPORT_FILTER,
  CSV_IMPORT_FILTER,
  skipWithoutSoffice as skip,
} from '../helpers/libreoffice.ts';
import { catalogOf, importItems, linesOf, requestExport } from '../export/export-helpers.ts';
import { productRows } from '../../src/export/sheet-rows.ts';
import type { StoredProduct } from '../../src/export/ingest-parts.ts';
import { plainDecimal } from '../../src/spreadsheets/sheet-cells.ts';
import { SHEET_COLUMNS } from '../../src/spreadsheets/sheet-layout.ts';
import { csvBody, csvItems, XLSX_TYPE, xlsxBody, xlsxItems } from './sheet-helpers.ts';
import { openFileSource } from '../../src/client/file-source.ts';
import { xlsxRows } from '../../src/spreadsheets/xlsx-rows.ts';
import type { SheetRow } from '../../src/spreadsheets/csv-rows.ts';

/**
 * docs/reference.md §11.4's round trip through a real spreadsheet program: LibreOffice headless converts the
 * export between CSV and XLSX, as a merchandiser's "open, edit, save as" does, with the recipes of
 * docs/spreadsheets.md (test/helpers/libreoffice.ts). Skipped, saying why, where it is not installed.
 * The same round trip through the command-line client: sheet-libreoffice-cli.test.ts.
 */

const svc = testServiceForFile();

/**
 * A catalog of what survives a spreadsheet program's defaults: texts with commas, quotes, newlines
 * and accents, decimals, images over two rows. (Leading zeros, `""` and formula-looking text need
 * the program told to read columns as text: docs/spreadsheets.md.)
 */
const images = (sku: string, from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    url: `https://cdn.example/${sku}/${from + i}.jpg`,
    angle: (from + i) * 10,
  }));

/** Stores `catalog()`, its first variant growing to 12 images over two items (exported over two rows). */
async function storeCatalog(token: string): Promise<void> {
  const items = catalog();
  await ingest(svc, token, items);
  await ingest(svc, token, [
    {
      ...items[0],
      variants: [variant({ sku: 'lo-sofa-oat', price: 1299.99, images: images('oat', 10, 2) })],
    },
  ]);
  const stored = (await catalogOf(svc, token)) as Array<{ variants: Array<{ images: unknown[] }> }>;
  assert.deepEqual(
    stored.map((p) => p.variants.map((v) => v.images.length)),
    [[12, 1], [1]],
  );
}

function catalog(): Array<Record<string, unknown>> {
  return [
    product({
      external_id: 'lo-sofa',
      name: 'Sofa "Oslo", three seats',
      description: 'Washed linen.\nCovers come off; déhoussable.',
      variants: [
        variant({ sku: 'lo-sofa-oat', price: 1299.99, images: images('oat', 0, 10) }),
        variant({ sku: 'lo-sofa-sand', name: 'Sand', price: 1349.5, depth: 95.25 }),
      ],
    }),
    product({
      external_id: 'lo-table',
      name: 'Table',
      variants: [variant({ sku: 'lo-table-1', price: 450 })],
    }),
  ];
}

void test(
  'XLSX export → LibreOffice → CSV → import into an empty tenant: the same catalog',
  { skip },
  async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sheet-lo-'));
    try {
      const source = await svc.token(svc.tenant('lo-source'));
      await storeCatalog(source);
      const xlsx = path.join(dir, 'products.xlsx');
      await fs.writeFile(xlsx, xlsxBody(await requestExport(svc, source, { accept: XLSX_TYPE })));
      const csv = await fs.readFile(await convert(xlsx, 'csv', dir), 'utf8');

      const copy = await svc.token(svc.tenant('lo-copy'));
      await importItems(svc, copy, await csvItems(csv));
      assert.deepEqual(await catalogOf(svc, copy), await catalogOf(svc, source));
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);

void test(
  'CSV export, a few cells edited → LibreOffice → XLSX → import: exactly the edits',
  { skip },
  async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sheet-lo-'));
    try {
      const token = await svc.token(svc.tenant('lo-edit'));
      const items = catalog();
      await ingest(svc, token, items);
      const before = await catalogOf(svc, token);
      const exported = csvBody(await requestExport(svc, token, { accept: 'text/csv' }));
      // The merchandiser's edits: a price, and a product's name.
      const edited = exported
        .replace(',1349.5,', ',1199,')
        .replace('lo-table,Table,', 'lo-table,Round table,');
      assert.notEqual(edited, exported);
      const csv = path.join(dir, 'products.csv');
      await fs.writeFile(csv, edited);
      const converted = await convert(csv, 'xlsx', dir);
      await importItems(svc, token, await xlsxItems(await fs.readFile(converted)));

      const expected = structuredClone(before) as Array<{
        name: string;
        variants: Array<{ sku: string; price: number }>;
      }>;
      expected[0]!.variants[1]!.price = 1199;
      expected[1]!.name = 'Round table';
      assert.deepEqual(await catalogOf(svc, token), expected);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);

/** Texts a spreadsheet program is apt to change, each where the layout puts it. */
function textsCatalog(): Array<Record<string, unknown>> {
  return [
    product({
      external_id: '00017',
      name: 'ÄPPLARÖ bench, "outdoor"',
      description: 'Line one\r\nLine two\nA literal _x0041_, _x005F_ and a control\u0001character',
      variants: [
        variant({
          sku: '00102065',
          name: '=SUM(A1:A2)',
          brand: 'Ström & Söner <AB>',
          images: [{ url: 'https://cdn.example/applaro/1.jpg', angle: 90 }],
        }),
        variant({ sku: '007', name: '+44 sofa', price: 1349.5, depth: 95.25, images: undefined }),
      ],
    }),
    product({
      external_id: 'lo-tab',
      name: '@table',
      description: '-minus first\ttab inside',
      variants: [variant({ sku: 'lo-tab-1', price: 450 })],
    }),
  ];
}

/**
 * LibreOffice keeps a cell's line break as one `\n`: the `\r` of a `\r\n` is gone once the cell is
 * read, whichever way the XLSX writes it (`_x000D_`, `&#13;`, or with `_x000A_`), as LibreOffice's
 * own XLSX of that cell shows. docs/spreadsheets.md says so.
 */
const asLibreOfficeKeepsIt = (text: string) => text.replace(/\r\n/g, '\n');

void test(
  'XLSX export → LibreOffice → CSV: every text as written (line breaks, _xHHHH_, quotes, =, non-ASCII, zeros)',
  { skip },
  async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sheet-lo-'));
    try {
      const source = await svc.token(svc.tenant('lo-texts'));
      await ingest(svc, source, textsCatalog());
      const xlsx = path.join(dir, 'products.xlsx');
      await fs.writeFile(xlsx, xlsxBody(await requestExport(svc, source, { accept: XLSX_TYPE })));
      const csv = await fs.readFile(await convert(xlsx, 'csv', dir), 'utf8');

      // The cells LibreOffice wrote, against the export's own rows of the stored products.
      // (An NDJSON line leaves out a variant's images when it has none.)
      const products = (linesOf(await requestExport(svc, source)) as unknown as StoredProduct[]).map((p) => ({
        ...p,
        variants: p.variants.map((v) => ({ ...v, images: v.images ?? [] })),
      }));
      const expected = [
        [...SHEET_COLUMNS],
        ...products
          .flatMap(productRows)
          .map((row) =>
            row.map((cell) =>
              cell === null ? '' : typeof cell === 'number' ? plainDecimal(cell) : asLibreOfficeKeepsIt(cell),
            ),
          ),
      ];
      assert.deepEqual(parse(csv, { bom: true }), expected);
      assert.match(
        csv,
        /\n00017,"ÄPPLARÖ bench, ""outdoor""","Line one\nLine two\nA literal _x0041_, _x005F_ /,
      );
      assert.match(csv, /,00102065,=SUM\(A1:A2\),/);

      // Imported again, the catalog is the same but for that line break.
      const copy = await svc.token(svc.tenant('lo-texts-copy'));
      await importItems(svc, copy, await csvItems(csv));
      const original = (await catalogOf(svc, source)).map((p) => ({
        ...p,
        description: asLibreOfficeKeepsIt(p.description as string),
      }));
      assert.deepEqual(await catalogOf(svc, copy), original);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);

void test('docs/spreadsheets.md gives the LibreOffice recipes these tests run', async () => {
  const docs = await fs.readFile(new URL('../../docs/spreadsheets.md', import.meta.url), 'utf8');
  assert.ok(docs.includes(`--convert-to 'csv:${CSV_EXPORT_FILTER}'`));
  assert.ok(docs.includes(`--infilter='${CSV_IMPORT_FILTER}'`));
});
void test(
  'non-ASCII names saved as XLSX by LibreOffice read back exactly through the CLI reader (#53)',
  { skip },
  async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sheet-lo-'));
    try {
      // Enough rows that LibreOffice's shared strings part spans many pieces of any reader's, with
      // its 2-, 3- and 4-byte characters at every offset: the bug was BLYSKÄR read as BLYSK��R.
      const names = ['LOBERGET / BLYSKÄR, white', 'ÄPPLARÖ bänk', 'Stol 😀🪑', '桌子 椅子', 'Ωmega façade'];
      const rows = Array.from({ length: 3000 }, (_, i) => [`lo-${i}`, `${names[i % names.length]} ${i}`]);
      const csv = path.join(dir, 'names.csv');
      await fs.writeFile(
        csv,
        `external_id,name\n${rows.map(([id, name]) => `${id},"${name!.replace(/"/g, '""')}"`).join('\n')}\n`,
      );
      const source = await openFileSource(await convert(csv, 'xlsx', dir));
      const read: SheetRow[] = [];
      try {
        for await (const row of xlsxRows(source)) read.push(row);
      } finally {
        await source.close();
      }
      assert.deepEqual(read, [
        { row: 1, cells: ['external_id', 'name'] },
        ...rows.map((cells, i) => ({ row: i + 2, cells })),
      ]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  },
);
