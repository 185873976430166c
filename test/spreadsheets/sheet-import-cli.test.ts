import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import { readErrorLines, startCliService, type CliService } from '../helpers/ingest-cli.ts';
import { SHEET_COLUMNS } from '../../src/spreadsheets/sheet-layout.ts';
import { buildXlsx, type FixtureCell } from './xlsx-fixtures.ts';

/** docs/reference.md §11.5 through `npm run ingest -- FILE.csv|FILE.xlsx`, against the service as a process. */

const PRODUCT = { style: 'Modern', type: 'Sofas & Loveseats', sub_type: 'Sofa' };

/** A row of the layout from named cells; the others empty. */
const rowOf = (cells: Record<string, string>, columns: readonly string[] = SHEET_COLUMNS) =>
  columns.map((column) => cells[column] ?? '');

/** A CSV cell as RFC 4180 writes it when it must be quoted. */
const quoted = (text: string) => `"${text.replace(/"/g, '""')}"`;

const variantCells = (sku: string, overrides: Record<string, string> = {}) => ({
  sku,
  variant_name: 'Oat',
  item_url: `https://shop.example/${sku}`,
  depth: '1.5',
  height: '2',
  width: '3',
  weight: '4',
  color: 'Beige',
  price: '10',
  brand: 'Northwind',
  ...overrides,
});

void describe('npm run ingest with a spreadsheet', () => {
  let service: CliService;

  before(async () => {
    service = await startCliService();
  });

  after(async () => {
    await service.stop();
  });

  const run = (file: string, tenant: string, extra: string[] = []) => service.ingest(file, tenant, extra);

  const stored = async (tenant: string) =>
    (await service.allProducts(tenant)).map(({ created_at: _c, updated_at: _u, ...rest }) => rest);

  void test('a semicolon CSV with BOM, quoted newlines, 10 images, a product over rows, guarded formulas; errors name row and column', async () => {
    const tenant = `sheet-${randomUUID()}`;
    const file = path.join(service.dir, `${tenant}.csv`);
    const images = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [
        [`image_${i + 1}_url`, `https://cdn.example/s1/${i + 1}.jpg`],
        [`image_${i + 1}_angle`, String(i * 36)],
      ]).flat(),
    ) as Record<string, string>;
    const lines = [
      `\uFEFF${SHEET_COLUMNS.join(';')}`,
      rowOf({
        external_id: 'sofa-1',
        name: quoted('Sofa "Oslo"'),
        description: quoted('line one\nline two; with a semicolon'),
        ...PRODUCT,
        ...variantCells('S1', { price: '1299.99' }),
        ...images,
      }).join(';'),
      rowOf({
        external_id: 'sofa-1',
        ...variantCells('S2', { variant_name: quoted(`'=HYPERLINK("x")`), brand: "'+brand" }),
      }).join(';'),
      rowOf({
        external_id: 'sofa-1',
        name: quoted('Sofa "Oslo"'),
        ...variantCells('S3', { variant_name: "'plain", brand: '""' }),
        image_3_url: 'https://cdn.example/s3/3.jpg',
      }).join(';'),
      rowOf({
        external_id: 'table-1',
        name: 'Table',
        description: 'd',
        ...PRODUCT,
        ...variantCells('T1', { price: '1.299,00' }),
      }).join(';'),
      rowOf({
        external_id: 'chair-1',
        name: 'Chair',
        description: 'd',
        ...PRODUCT,
        ...variantCells('C1', { color: 'Purpleish' }),
      }).join(';'),
    ];
    await fs.writeFile(file, `${lines.join('\r\n')}\r\n`);

    const result = await run(file, tenant);

    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr.trim().split('\n').at(-1)!,
      /^3 items: 1 upserted, 2 failed, 0 replayed \(errors in .*\), \d+\.\d s$/,
    );
    const errorLines = (await readErrorLines(`${file}.errors.jsonl`)).sort((a, b) => a.position - b.position);
    assert.deepEqual(
      errorLines.map((line) => ({
        position: line.position,
        external_id: line.external_id,
        errors: line.errors.map(({ field, code, row, column }) => ({ field, code, row, column })),
      })),
      [
        {
          position: 1,
          // Never sent, and still named by the product its cells give.
          external_id: 'table-1',
          errors: [{ field: 'variants[0].price', code: 'invalid_type', row: 5, column: 'price' }],
        },
        {
          position: 2,
          external_id: 'chair-1',
          errors: [{ field: 'variants[0].color', code: 'invalid_value', row: 6, column: 'color' }],
        },
      ],
    );
    assert.match(
      errorLines[0]!.errors[0]!.message,
      /"1\.299,00" is written with a decimal comma or thousands separators/,
    );

    const variant = (sku: string, name: string, brand: string, imageList: unknown[]) => ({
      sku,
      name,
      item_url: `https://shop.example/${sku}`,
      depth: 1.5,
      height: 2,
      width: 3,
      weight: 4,
      color: 'Beige',
      price: 10,
      brand,
      images: imageList,
    });
    assert.deepEqual(await stored(tenant), [
      {
        external_id: 'sofa-1',
        name: 'Sofa "Oslo"',
        description: 'line one\nline two; with a semicolon',
        ...PRODUCT,
        variants: [
          {
            ...variant(
              'S1',
              'Oat',
              'Northwind',
              Array.from({ length: 10 }, (_, i) => ({
                url: `https://cdn.example/s1/${i + 1}.jpg`,
                angle: i * 36,
              })),
            ),
            price: 1299.99,
          },
          variant('S2', '=HYPERLINK("x")', '+brand', []),
          variant('S3', "'plain", '', [{ url: 'https://cdn.example/s3/3.jpg', angle: null }]),
        ],
      },
    ]);
  });

  void test('each layout defect refuses the file before anything is sent, naming row and column', async () => {
    const header = SHEET_COLUMNS.join(',');
    const good = (id: string, sku: string) =>
      rowOf({ external_id: id, name: 'N', ...PRODUCT, ...variantCells(sku) }).join(',');
    const cases: Array<{ csv: string[]; says: RegExp }> = [
      {
        csv: [`${header},colour`, good('a', 'a1')],
        says: /row 1, column "colour": unknown column \(column 37\)/,
      },
      {
        csv: [`${header},sku`, good('a', 'a1')],
        says: /row 1, column "sku": repeated column \(columns 7 and 37\)/,
      },
      {
        csv: [SHEET_COLUMNS.filter((c) => c !== 'external_id').join(','), 'x'],
        says: /row 1, column "external_id": no external_id column/,
      },
      {
        csv: [header, good('a', 'a1'), good('b', 'b1'), good('a', 'a2')],
        says: /row 4, column "external_id": the rows of product "a" are not consecutive/,
      },
      {
        csv: [
          header,
          good('a', 'a1'),
          rowOf({ external_id: 'a', style: 'Rustic', ...variantCells('a2') }).join(','),
        ],
        says: /row 3, column "style": differs from the product's first row \(row 2\)/,
      },
    ];
    // Also in batches of one item, so that a defect after the first rows comes after whole batches.
    for (const [n, { csv, says }] of cases.entries()) {
      for (const extra of [[], ['--batch-size', '1']]) {
        const tenant = `sheet-refused-${n}-${randomUUID()}`;
        const file = path.join(service.dir, `${tenant}.csv`);
        await fs.writeFile(file, `${csv.join('\n')}\n`);
        const result = await run(file, tenant, extra);
        assert.equal(result.code, 1, result.stderr);
        assert.match(result.stderr, says);
        assert.match(result.stderr, /0 submitted/);
        assert.deepEqual(
          await service.allProducts(tenant),
          [],
          `case ${n} ${extra.join(' ')}: nothing stored`,
        );
        await assert.rejects(fs.stat(`${file}.errors.jsonl`), { code: 'ENOENT' });
      }
    }
  });

  void test('XLSX: numeric and text cells, a text SKU keeps its zeros, empty image cells keep the stored images', async () => {
    const tenant = `sheet-xlsx-${randomUUID()}`;
    const first = path.join(service.dir, `${tenant}-1.xlsx`);
    const write = async (file: string, rows: Array<Array<string | number | null>>) => {
      const workbook = new ExcelJS.Workbook();
      const sheet = workbook.addWorksheet('products');
      sheet.addRow([...SHEET_COLUMNS]);
      for (const row of rows) sheet.addRow(row);
      await workbook.xlsx.writeFile(file);
    };
    const cells = (values: Record<string, string | number | null>) =>
      SHEET_COLUMNS.map((column) => (column in values ? values[column]! : null));
    // The lamp's cells but for its height, price and images; '00042' and '007' are text cells.
    const lamp = {
      external_id: '00042',
      name: 'Lamp',
      description: 'Arc lamp',
      ...PRODUCT,
      sku: '007',
      variant_name: 'Brass',
      item_url: 'https://shop.example/007',
      depth: 30,
      width: 40,
      weight: 8,
      color: 'Beige',
      brand: 'Lumen',
    };
    await write(first, [
      cells({
        ...lamp,
        height: '180.5',
        price: 249.9,
        image_1_url: 'https://cdn.example/007/a.jpg',
        image_1_angle: 45,
        image_2_url: 'https://cdn.example/007/b.jpg',
      }),
    ]);
    const created = await run(first, tenant);
    assert.equal(created.code, 0, created.stderr);

    // An update whose image cells are empty, and a price changed: the stored images and angles stay.
    const second = path.join(service.dir, `${tenant}-2.xlsx`);
    await write(second, [cells({ ...lamp, height: 180.5, price: 199 })]);
    const updated = await run(second, tenant);
    assert.equal(updated.code, 0, updated.stderr);

    assert.deepEqual(await stored(tenant), [
      {
        external_id: '00042',
        name: 'Lamp',
        description: 'Arc lamp',
        ...PRODUCT,
        variants: [
          {
            sku: '007',
            name: 'Brass',
            item_url: 'https://shop.example/007',
            depth: 30,
            height: 180.5,
            width: 40,
            weight: 8,
            color: 'Beige',
            price: 199,
            brand: 'Lumen',
            images: [
              { url: 'https://cdn.example/007/a.jpg', angle: 45 },
              { url: 'https://cdn.example/007/b.jpg', angle: null },
            ],
          },
        ],
      },
    ]);
  });

  void test('XLSX as LibreOffice lays it out (shared strings after the sheet) and a first tab in sheet2.xml: the exact text (#53)', async () => {
    const columns = [...SHEET_COLUMNS.slice(0, 16)];
    const row = (id: string, name: string, sku: string): FixtureCell[] => [
      id,
      name,
      'ÄPPLARÖ 😀 桌子',
      ...Object.values(PRODUCT),
      sku,
      'Vit BLYSKÄR',
      `https://shop.example/${sku}`,
      95.5,
      82,
      214,
      61.2,
      'Beige',
      1299.5,
      'BLYSKÄR AB',
    ];
    const catalog = (name: string, sku: string) => ({
      name: 'Catalog',
      rows: [columns, row('lo-1', name, sku)],
    });
    const expected = (name: string, sku: string) => [
      {
        external_id: 'lo-1',
        name,
        description: 'ÄPPLARÖ 😀 桌子',
        ...PRODUCT,
        variants: [
          {
            sku,
            name: 'Vit BLYSKÄR',
            item_url: `https://shop.example/${sku}`,
            depth: 95.5,
            height: 82,
            width: 214,
            weight: 61.2,
            color: 'Beige',
            price: 1299.5,
            brand: 'BLYSKÄR AB',
            images: [],
          },
        ],
      },
    ];
    const files = [
      {
        form: 'libreoffice',
        bytes: buildXlsx([catalog('LOBERGET / BLYSKÄR, white', 'LO-1')], 'libreoffice'),
      },
      {
        // The workbook lists Catalog first, kept in sheet2.xml; sheet1.xml is another tab, which
        // would be refused (an unknown column) if it were read.
        form: 'tab-order',
        bytes: buildXlsx(
          [
            catalog('LOBERGET / BLYSKÄR, white', 'LO-2'),
            { name: 'Notes', rows: [['note'], ['not the catalog']] },
          ],
          'excel',
          { sheetFiles: ['sheet2.xml', 'sheet1.xml'] },
        ),
      },
    ];
    for (const { form, bytes } of files) {
      const tenant = `sheet-xlsx-${form}-${randomUUID()}`;
      const file = path.join(service.dir, `${tenant}.xlsx`);
      await fs.writeFile(file, bytes);
      const result = await run(file, tenant);
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stderr.trim().split('\n').at(-1)!,
        /^1 item: 1 upserted, 0 failed, 0 replayed, \d+\.\d s$/,
      );
      assert.deepEqual(
        await stored(tenant),
        expected('LOBERGET / BLYSKÄR, white', form === 'libreoffice' ? 'LO-1' : 'LO-2'),
        form,
      );
    }
  });

  void test('a file named .xlsx that is not a workbook is refused before anything is sent', async () => {
    const tenant = `sheet-not-xlsx-${randomUUID()}`;
    const file = path.join(service.dir, `${tenant}.xlsx`);
    await fs.writeFile(file, 'external_id,name\nsofa-1,Sofa\n');
    const result = await run(file, tenant);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /it is not an XLSX workbook that can be read \(it is not a zip file: no end of central directory record\)/,
    );
    assert.deepEqual(await service.allProducts(tenant), []);
  });

  void test('--dry-run of a CSV names row and column in the preview file, and stores nothing', async () => {
    const tenant = `sheet-dry-${randomUUID()}`;
    const file = path.join(service.dir, `${tenant}.csv`);
    const columns = ['external_id', 'name', 'style', 'type', 'sub_type', 'sku', 'variant_name', 'price'];
    await fs.writeFile(
      file,
      [
        columns.join(','),
        rowOf(
          { external_id: 'p', name: 'P', ...PRODUCT, sku: 'p1', variant_name: 'x', price: '5' },
          columns,
        ).join(','),
        rowOf({ external_id: 'p', sku: 'p2', variant_name: 'y', price: quoted('1,5') }, columns).join(','),
      ].join('\n'),
    );
    const result = await run(file, tenant, ['--dry-run']);
    assert.equal(result.code, 2, result.stderr);
    const [line] = (await fs.readFile(`${file}.preview.jsonl`, 'utf8'))
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            position: number;
            external_id: string | null;
            action: string;
            errors: Array<{ field: string; code: string; row: number; column: string }>;
          },
      );
    assert.equal(line?.action, 'invalid');
    assert.equal(line?.external_id, 'p');
    assert.deepEqual(
      line?.errors.map(({ field, code, row, column }) => ({ field, code, row, column })),
      [{ field: 'variants[1].price', code: 'invalid_type', row: 3, column: 'price' }],
    );
    assert.deepEqual(await service.allProducts(tenant), []);
  });
  void test('--dry-run warns of a sku whose leading zeros a spreadsheet program dropped, naming both and the row', async () => {
    const tenant = `sheet-zeros-${randomUUID()}`;
    const csv = (sku: string) =>
      [
        SHEET_COLUMNS.join(','),
        rowOf({
          external_id: 'lamp',
          name: 'Lamp',
          description: 'A lamp',
          ...PRODUCT,
          ...variantCells(sku),
        }).join(','),
      ].join('\n');
    const original = path.join(service.dir, `${tenant}.csv`);
    await fs.writeFile(original, csv('00102065'));
    assert.equal((await run(original, tenant)).code, 0);
    // The file as LibreOffice saves it when it read the sku column as numbers.
    const edited = path.join(service.dir, `${tenant}-edited.csv`);
    await fs.writeFile(edited, csv('102065'));
    const result = await run(edited, tenant, ['--dry-run']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /\n1 warning:\n {2}row 2, column "sku": sku "102065" would be added as a new variant, but the product has the sku "00102065", the same once leading zeros are dropped\./,
    );
    const [line] = (await fs.readFile(`${edited}.preview.jsonl`, 'utf8')).trim().split('\n');
    const entry = JSON.parse(line ?? '{}') as { action: string; shown: string[]; warnings: unknown[] };
    assert.equal(entry.action, 'update');
    assert.deepEqual(entry.shown, ['variants[0]: added']);
    assert.deepEqual(
      (entry.warnings as Array<Record<string, unknown>>).map(({ message: _m, ...rest }) => rest),
      [
        {
          field: 'variants[0].sku',
          code: 'sku_leading_zeros',
          sku: '102065',
          stored_sku: '00102065',
          row: 2,
          column: 'sku',
        },
      ],
    );
  });
});
