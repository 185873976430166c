/**
 * The dashboard's import of spreadsheets (docs/reference.md §11.5) in headless Chromium against the real
 * service: a CSV with a semicolon, a BOM, a product over two rows and a decimal-comma price, previewed
 * with rows and columns and sent without its invalid items; an XLSX made here with `exceljs`; XLSX files
 * laid out as LibreOffice writes them and with the first tab in sheet2.xml; a file refused whole; and 100,000-row files read without freezing the page.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ExcelJS from 'exceljs';
import type { Page } from 'playwright-core';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { ingest } from '../helpers/assertions.ts';
import {
  assertAccessible,
  browserTest,
  dashboardWorldForFile,
  refusePreviews,
  scenario,
  screenshot,
} from './dashboard-browser.ts';
import { PRODUCT_COLUMNS, VARIANT_COLUMNS, XLSX_TYPE } from '../../src/spreadsheets/sheet-layout.ts';
import { buildXlsx, type FixtureCell } from '../spreadsheets/xlsx-fixtures.ts';

const world = dashboardWorldForFile();

/** The product and variant columns (no image columns) of the spreadsheet layout (docs/reference.md §11.5). */
const COLUMNS = [...PRODUCT_COLUMNS, ...VARIANT_COLUMNS];

/**
 * A row of a sofa variant in the order of COLUMNS; the product cells empty when `later` (null: an
 * empty CSV field when joined, no cell in XLSX, where an empty text cell would be the empty string).
 */
function sofaRow(
  id: string,
  sku: string,
  price: string | number,
  later = false,
): Array<string | number | null> {
  const productCells = later
    ? [null, null, null, null, null]
    : [`Sofa ${id}`, 'Washed linen', 'Modern', 'Sofas & Loveseats', 'Sofa'];
  return [
    id,
    ...productCells,
    sku,
    'Oat',
    'https://shop.example/sofa',
    95.5,
    82,
    214,
    61.2,
    'Beige',
    price,
    'Northwind',
  ];
}

/** The text of every cell of the table's body rows, trimmed. */
async function bodyCells(page: Page, region: string): Promise<string[][]> {
  const rows = page.getByRole('region', { name: region }).locator('tbody tr');
  const cells: string[][] = [];
  for (const row of await rows.all()) {
    cells.push((await row.getByRole('cell').allInnerTexts()).map((text) => text.trim()));
  }
  return cells;
}

/** GET a JSON answer of the API in process. */
async function apiGet<T>(token: string, url: string): Promise<T> {
  const response = await world.api.request({ method: 'GET', url, token });
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return response.json<T>();
}

const PICK = /Drop a JSON, JSON Lines, CSV or XLSX file/;

browserTest(
  'a CSV with ; and a BOM: invalid items shown with row and column, only the valid ones sent, errors at their rows',
  async (t) => {
    const tenant = world.api.tenant('csv');
    const token = await world.api.token(tenant);
    const rows = [
      COLUMNS,
      sofaRow('sofa-a', 'a-1', '1299.5'),
      sofaRow('sofa-a', 'a-2', '1349', true),
      sofaRow('chair-b', 'b-1', '1.299,00'),
      sofaRow('lamp-c', 'c-1', '-5'),
      sofaRow('table-d', 'd-1', '450'),
      sofaRow('stool-e', 'e-1', '120'),
    ];
    const csv = `\uFEFF${rows.map((row) => row.join(';')).join('\r\n')}\r\n`;
    const page = await world.open(token, '#/import');
    await scenario(t, page, 'import-csv', async () => {
      await page
        .getByLabel(PICK)
        .setInputFiles({ name: 'catalog.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      const totals = page.getByTestId('preview-totals');
      await totals.waitFor();
      assert.equal(
        (await totals.innerText()).replace(/\s+/g, ' '),
        'Create 3 Update 0 Unchanged 0 Invalid 2',
      );
      const comma =
        '"1.299,00" is written with a decimal comma or thousands separators; write numbers as plain decimals with "." and no grouping, e.g. 1299.00';
      assert.deepEqual(
        (await bodyCells(page, 'Preview of the items')).map(([item, row, id, action, , errors]) => [
          item,
          row,
          id,
          action,
          errors,
        ]),
        [
          ['0', '2', 'sofa-a', 'create', '—'],
          ['1', '4', 'chair-b', 'invalid', `invalid_type variants[0].price (row 4, column price): ${comma}`],
          [
            '2',
            '5',
            'lamp-c',
            'invalid',
            'out_of_range variants[0].price (row 5, column price): variants[0].price must be >= 0.',
          ],
          ['3', '6', 'table-d', 'create', '—'],
          ['4', '7', 'stool-e', 'create', '—'],
        ],
      );
      assert.match(
        await page.getByRole('status').innerText(),
        /catalog\.csv: 5 items read; 2 invalid; 1 cannot be sent/,
      );
      await assertAccessible(page, 'import preview (CSV)');
      await screenshot(page, 'import-csv-preview', { docs: true });

      // After the preview, another product takes stool-e's sku: the service refuses stool-e when the
      // batch runs, so its error must name row 7 although only 3 of the 5 items were sent.
      const thief = product({ external_id: 'thief', variants: [variant({ sku: 'e-1' })] });
      await world.api.waitForTerminal(token, await world.api.submit(token, [thief]));

      await page.getByRole('button', { name: 'Send all 4 items' }).waitFor();
      await page.getByRole('button', { name: 'Send 3 valid items' }).click();
      const batchRow = page.getByRole('region', { name: 'Submitted batches' }).locator('tbody tr');
      await batchRow.getByText('completed with errors').waitFor({ timeout: 20_000 });
      assert.match(await batchRow.innerText(), /2 upserted, 1 failed/);
      const batchId = (await batchRow.getByRole('link').innerText()).trim();
      const [refused] = await world.api.allErrors(token, batchId);
      assert.equal(refused?.index, 2, 'stool-e is the third item sent');
      const { message } = (refused?.errors as Array<{ message: string }>)[0]!;
      await page.getByRole('region', { name: 'Items the service refused' }).waitFor();
      assert.deepEqual(await bodyCells(page, 'Items the service refused'), [
        ['4', '7', 'stool-e', 'e-1', `sku_conflict variants[0].sku (row 7, column sku): ${message}`, batchId],
      ]);
      await assertAccessible(page, 'import submitted (CSV)');
      await screenshot(page, 'import-csv-sent', { docs: true });

      const listed = await apiGet<{ data: Array<{ external_id: string }> }>(token, '/products?limit=100');
      assert.deepEqual(
        listed.data.map((stored) => stored.external_id),
        ['sofa-a', 'table-d', 'thief'],
      );
      const sofa = await apiGet<{ name: string; variants: Array<{ sku: string; price: number }> }>(
        token,
        '/products/sofa-a',
      );
      assert.equal(sofa.name, 'Sofa sofa-a');
      assert.deepEqual(
        sofa.variants.map(({ sku, price }) => ({ sku, price })),
        [
          { sku: 'a-1', price: 1299.5 },
          { sku: 'a-2', price: 1349 },
        ],
      );
    });
  },
);

browserTest(
  'an XLSX made with exceljs imports exactly (numeric cells, a text sku with leading zeros)',
  async (t) => {
    const tenant = world.api.tenant('xlsx');
    const token = await world.api.token(tenant);
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('catalog');
    sheet.addRow(COLUMNS);
    sheet.addRow(sofaRow('bed-1', '00042', 1299.5));
    sheet.addRow(sofaRow('bed-1', '00043', 1349, true));
    sheet.addRow(sofaRow('desk-2', 'desk-oak', 450));
    // A text cell with a decimal comma: invalid, and never sendable, so "all" already leaves it out.
    sheet.addRow(sofaRow('lamp-3', 'lamp-brass', '1.299,00'));
    const buffer = Buffer.from(await workbook.xlsx.writeBuffer());
    const page = await world.open(token, '#/import');
    await scenario(t, page, 'import-xlsx', async () => {
      await page.getByLabel(PICK).setInputFiles({ name: 'catalog.xlsx', mimeType: XLSX_TYPE, buffer });
      const totals = page.getByTestId('preview-totals');
      await totals.waitFor({ timeout: 20_000 });
      assert.equal(
        (await totals.innerText()).replace(/\s+/g, ' '),
        'Create 2 Update 0 Unchanged 0 Invalid 1',
      );
      assert.equal(
        await page.getByRole('button', { name: /valid items/ }).count(),
        0,
        'the one invalid item cannot be sent: "all" and "valid" would send the same items, one button',
      );
      await assertAccessible(page, 'import preview (XLSX)');
      await page.getByRole('button', { name: 'Send all 2 items' }).click();
      const batchRow = page.getByRole('region', { name: 'Submitted batches' }).locator('tbody tr');
      await batchRow.getByText('completed', { exact: true }).waitFor({ timeout: 20_000 });
      assert.match(await batchRow.innerText(), /2 upserted, 0 failed/);
      await assertAccessible(page, 'import submitted (XLSX)');

      const bed = await apiGet<Record<string, unknown>>(token, '/products/bed-1');
      const { created_at: _c, updated_at: _u, ...fields } = bed;
      const variantFields = (fields.variants as Array<Record<string, unknown>>).map(
        ({ created_at: _vc, updated_at: _vu, ...rest }) => rest,
      );
      const shared = {
        name: 'Oat',
        item_url: 'https://shop.example/sofa',
        depth: 95.5,
        height: 82,
        width: 214,
        weight: 61.2,
        color: 'Beige',
        brand: 'Northwind',
        images: [],
      };
      assert.deepEqual(
        { ...fields, variants: variantFields },
        {
          external_id: 'bed-1',
          name: 'Sofa bed-1',
          description: 'Washed linen',
          style: 'Modern',
          type: 'Sofas & Loveseats',
          sub_type: 'Sofa',
          variants: [
            { sku: '00042', ...shared, price: 1299.5 },
            { sku: '00043', ...shared, price: 1349 },
          ],
        },
      );
      const desk = await apiGet<{ variants: Array<{ sku: string; price: number }> }>(
        token,
        '/products/desk-2',
      );
      assert.deepEqual(
        desk.variants.map(({ sku, price }) => ({ sku, price })),
        [{ sku: 'desk-oak', price: 450 }],
      );
    });
  },
);

browserTest(
  'XLSX laid out as LibreOffice does, and one whose first tab is sheet2.xml, import their exact text (#53)',
  async (t) => {
    const row = (id: string, sku: string): FixtureCell[] => [
      id,
      'LOBERGET / BLYSKÄR, white',
      'ÄPPLARÖ 😀 桌子',
      'Modern',
      'Sofas & Loveseats',
      'Sofa',
      sku,
      'Vit BLYSKÄR',
      'https://shop.example/sofa',
      95.5,
      82,
      214,
      61.2,
      'Beige',
      1299.5,
      'BLYSKÄR AB',
    ];
    const catalog = (id: string, sku: string) => ({ name: 'Catalog', rows: [COLUMNS, row(id, sku)] });
    const files = [
      { form: 'libreoffice', id: 'lo-1', bytes: buildXlsx([catalog('lo-1', 'LO-1')], 'libreoffice') },
      {
        form: 'tab-order',
        id: 'lo-2',
        // Catalog is the first tab, kept in sheet2.xml; sheet1.xml would be refused if it were read.
        bytes: buildXlsx(
          [catalog('lo-2', 'LO-2'), { name: 'Notes', rows: [['note'], ['not the catalog']] }],
          'excel',
          {
            sheetFiles: ['sheet2.xml', 'sheet1.xml'],
          },
        ),
      },
    ];
    for (const { form, id, bytes } of files) {
      const token = await world.api.token(world.api.tenant(`xlsx-${form}`));
      const page = await world.open(token, '#/import');
      await scenario(t, page, `import-xlsx-${form}`, async () => {
        await page
          .getByLabel(PICK)
          .setInputFiles({ name: `${form}.xlsx`, mimeType: XLSX_TYPE, buffer: Buffer.from(bytes) });
        const totals = page.getByTestId('preview-totals');
        await totals.waitFor({ timeout: 30_000 });
        assert.equal(
          (await totals.innerText()).replace(/\s+/g, ' '),
          'Create 1 Update 0 Unchanged 0 Invalid 0',
          form,
        );
        await page.getByRole('button', { name: 'Send all 1 items' }).click();
        const batchRow = page.getByRole('region', { name: 'Submitted batches' }).locator('tbody tr');
        await batchRow.getByText('completed', { exact: true }).waitFor({ timeout: 30_000 });
        const stored = await apiGet<{
          name: string;
          description: string;
          variants: Array<{ sku: string; name: string; brand: string; price: number }>;
        }>(token, `/products/${id}`);
        assert.deepEqual(
          {
            name: stored.name,
            description: stored.description,
            variants: stored.variants.map(({ sku, name, brand, price }) => ({ sku, name, brand, price })),
          },
          {
            name: 'LOBERGET / BLYSKÄR, white',
            description: 'ÄPPLARÖ 😀 桌子',
            variants: [{ sku: id.toUpperCase(), name: 'Vit BLYSKÄR', brand: 'BLYSKÄR AB', price: 1299.5 }],
          },
          form,
        );
      });
    }
  },
);

browserTest('a file named .xlsx that is not a workbook says so, and nothing is sent', async (t) => {
  const token = await world.api.token(world.api.tenant('not-xlsx'));
  const page = await world.open(token, '#/import');
  await scenario(t, page, 'import-not-xlsx', async () => {
    await page.getByLabel(PICK).setInputFiles({
      name: 'catalog.xlsx',
      mimeType: XLSX_TYPE,
      buffer: Buffer.from('external_id,name\nsofa-1,Sofa\n'),
    });
    const alert = page.getByRole('alert').filter({ hasText: 'cannot be read' });
    await alert.waitFor({ timeout: 30_000 });
    assert.equal(
      await alert.innerText(),
      'catalog.xlsx cannot be read: it is not an XLSX workbook that can be read (it is not a zip file: no end of central directory record)',
    );
  });
});

browserTest('a repeated column refuses the file with its row and column, and nothing is sent', async (t) => {
  const tenant = world.api.tenant('refused');
  const token = await world.api.token(tenant);
  const header = [...COLUMNS, 'price'];
  const csv = [header, [...sofaRow('sofa-a', 'a-1', '10'), '12']].map((row) => row.join(',')).join('\n');
  const page = await world.open(token, '#/import');
  const sent: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/products/ingestions')) sent.push(`${request.method()} ${request.url()}`);
  });
  await scenario(t, page, 'import-refused', async () => {
    await page
      .getByLabel(PICK)
      .setInputFiles({ name: 'repeated.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    const alert = page.getByRole('alert').filter({ hasText: 'refused' });
    await alert.waitFor();
    assert.equal(
      await alert.innerText(),
      'repeated.csv is refused and nothing was sent: row 1, column "price": repeated column (columns 15 and 17). Correct the file and choose it again.',
    );
    assert.deepEqual(sent, [], 'no preview and no submission was sent');
    assert.equal(await page.getByTestId('preview-totals').count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Send/ }).isDisabled(), true);
    await assertAccessible(page, 'import refused');
    const batches = await apiGet<{ data: unknown[] }>(token, '/products/ingestions');
    assert.deepEqual(batches.data, []);
  });
});

/** Long tasks (main-thread work over 50 ms, when the page cannot answer input) recorded from now on. */
async function watchLongTasks(page: Page): Promise<() => Promise<number[]>> {
  // A script in the page's terms: Node's PerformanceObserver types know no 'longtask'.
  await page.evaluate(`
      globalThis.longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) globalThis.longTasks.push(entry.duration);
      }).observe({ type: 'longtask' });
    `);
  return () => page.evaluate<number[]>('globalThis.longTasks');
}

browserTest('100,000-row CSV and XLSX files are read without freezing the page', async (t) => {
  const tenant = world.api.tenant('large-sheets');
  // The preview is refused (as without ingestions:write) after the first group, so the page reads the
  // whole file (the check, then the items) and the test measures that, not the service.
  const token = await world.api.token(tenant);
  const dir = await mkdtemp(path.join(tmpdir(), 'dashboard-sheets-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const count = 100_000;
  const rowOf = (i: number) => sofaRow(`p-${i}`, `s-${i}`, 100 + i / 100);
  const csvFile = path.join(dir, 'large.csv');
  await writeFile(
    csvFile,
    [COLUMNS, ...Array.from({ length: count }, (_, i) => rowOf(i))].map((row) => row.join(',')).join('\n'),
  );
  const xlsxFile = path.join(dir, 'large.xlsx');
  const writer = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: xlsxFile, useSharedStrings: true });
  const sheet = writer.addWorksheet('catalog');
  sheet.addRow(COLUMNS).commit();
  for (let i = 0; i < count; i++) sheet.addRow(rowOf(i)).commit();
  sheet.commit();
  await writer.commit();

  const longests: Array<[string, number]> = [];
  for (const [file, name] of [
    [csvFile, 'large.csv'],
    [xlsxFile, 'large.xlsx'],
  ] as const) {
    const page = await world.open(token, '#/import');
    await refusePreviews(page);
    await scenario(t, page, `import-${name.replace('.', '-')}`, async () => {
      const longTasks = await watchLongTasks(page);
      const started = Date.now();
      await page.getByLabel(PICK).setInputFiles(file);
      await page
        .getByRole('status')
        .filter({ hasText: `${name}: ${count} items read` })
        .waitFor({ timeout: 120_000 });
      const seconds = (Date.now() - started) / 1000;
      const tasks = await longTasks();
      const longest = Math.max(0, ...tasks);
      t.diagnostic(
        `${name}: ${count} rows checked and read in ${seconds.toFixed(1)} s; ${tasks.length} long tasks (${tasks.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
      );
      longests.push([name, longest]);
    });
  }
  for (const [name, longest] of longests)
    assert.ok(longest < 200, `${name}: the page was blocked for ${longest.toFixed(0)} ms at once`);
});

browserTest(
  'a CSV whose sku lost its leading zeros: the preview warns, naming both skus and the row',
  async (t) => {
    const tenant = world.api.tenant('csv-zeros');
    const token = await world.api.token(tenant);
    const stored = product({ external_id: 'sofa-z', variants: [variant({ sku: '00102065' })] });
    assert.equal((await ingest(world.api, token, [stored])).status, 'completed');
    const csv = [COLUMNS, sofaRow('sofa-z', '102065', '10')].map((row) => row.join(',')).join('\n');
    const page = await world.open(token, '#/import');
    await scenario(t, page, 'import-csv-leading-zeros', async () => {
      await page
        .getByLabel(PICK)
        .setInputFiles({ name: 'edited.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      const totals = page.getByTestId('preview-totals');
      await totals.waitFor();
      assert.equal(
        (await totals.innerText()).replace(/\s+/g, ' '),
        'Create 0 Update 1 Unchanged 0 Invalid 0 Warnings 1',
      );
      assert.equal(
        (await page.getByTestId('preview-warnings').innerText()).trim(),
        'sku_leading_zeros variants[0].sku (row 2, column sku): sku "102065" would be added as a new variant, but ' +
          'the product has the sku "00102065", the same once leading zeros are dropped. If a spreadsheet program ' +
          'dropped them, set the sku column to text when opening the file (docs/spreadsheets.md, "Leading zeros").',
      );
      await assertAccessible(page, 'import preview with a warning');
    });
  },
);
