import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { ingest } from '../helpers/assertions.ts';
import { catalogOf, importItems, requestExport } from '../export/export-helpers.ts';
import { csvBody, csvItems, XLSX_TYPE, xlsxBody, xlsxItems } from './sheet-helpers.ts';
import { openFileSource } from '../../src/client/file-source.ts';
import { xlsxRows } from '../../src/spreadsheets/xlsx-rows.ts';
import type { SheetRow } from '../../src/spreadsheets/csv-rows.ts';

/**
 * CONTRACT §11.4's round trip through a real spreadsheet program: LibreOffice headless (Debian's
 * `libreoffice-calc-nogui`, which `.ci/run` installs) converts the export between CSV and XLSX, as a
 * merchandiser's "open, edit, save as" does. Skipped, saying why, where it is not installed.
 */

const run = promisify(execFile);

async function findSoffice(): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'soffice');
    if (
      await fs.access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

const soffice = await findSoffice();
const skip =
  soffice === null ? 'LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui' : false;

const svc = testServiceForFile();

/** CSV as UTF-8, `,` and `"` (LibreOffice's filter options: separator 44, quote 34, charset 76, from row 1). */
const CSV_FILTER = 'CSV:44,34,76,1';

/** Converts `file` to `extension` with LibreOffice in a profile of its own; returns the new file's path. */
async function convert(file: string, extension: 'csv' | 'xlsx', dir: string): Promise<string> {
  const outDir = path.join(dir, `to-${extension}`);
  const args = [
    '--headless',
    '--norestore',
    `-env:UserInstallation=file://${path.join(dir, 'profile')}`,
    ...(extension === 'xlsx' ? [`--infilter=${CSV_FILTER}`] : []),
    '--convert-to',
    extension === 'csv' ? `csv:Text - txt - csv (StarCalc):44,34,76,1` : 'xlsx',
    '--outdir',
    outDir,
    file,
  ];
  await run(soffice!, args, { timeout: 120_000 });
  return path.join(outDir, `${path.basename(file, path.extname(file))}.${extension}`);
}

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
