/**
 * The dashboard's import of files as other programs encode them (docs/spreadsheets.md#encodings), in
 * headless Chromium against the real service: a Windows-1252 CSV (Excel's "CSV (Comma delimited)")
 * refused before anything is sent, then imported exactly once its encoding is chosen; Excel's
 * "Unicode Text" (UTF-16LE with a byte order mark, tab-separated) imported as it is.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { assertAccessible, browserTest, dashboardWorldForFile, scenario } from './dashboard-browser.ts';
import {
  COLUMNS,
  DESCRIPTION,
  NAME,
  sofaRow,
  utf16,
  windows1252,
} from '../spreadsheets/encoding-fixtures.ts';

const world = dashboardWorldForFile();

const PICK = /Drop a JSON, JSON Lines, CSV or XLSX file/;

/** The stored product's name, description and variant skus. */
async function stored(token: string, id: string) {
  const response = await world.api.request({ method: 'GET', url: `/products/${id}`, token });
  assert.equal(response.statusCode, 200, response.body);
  const { name, description, variants } = response.json<{
    name: string;
    description: string;
    variants: Array<{ sku: string }>;
  }>();
  return { name, description, skus: variants.map((v) => v.sku) };
}

/** Sends every item once the preview is shown, and waits for the batch to complete. */
async function sendAll(page: Page, count: number) {
  await page.getByRole('button', { name: `Send all ${count} items` }).click();
  const batchRow = page.getByRole('region', { name: 'Submitted batches' }).locator('tbody tr');
  await batchRow.getByText('completed', { exact: true }).waitFor({ timeout: 20_000 });
  assert.match(await batchRow.innerText(), new RegExp(`${count} upserted, 0 failed`));
}

browserTest(
  'a Windows-1252 CSV is refused naming row, column and byte, nothing sent; with Windows-1252 chosen it imports exactly',
  async (t) => {
    const token = await world.api.token(world.api.tenant('cp1252'));
    const text = `${[COLUMNS, sofaRow('sofa-1', 's-1')].map((row) => row.join(',')).join('\r\n')}\r\n`;
    const bytes = Buffer.from(windows1252(text));
    const page = await world.open(token, '#/import');
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/products/ingestions')) sent.push(`${request.method()} ${request.url()}`);
    });
    await scenario(t, page, 'import-windows-1252', async () => {
      const select = page.getByLabel('Text encoding');
      assert.equal(await select.inputValue(), '', 'Detect is the default');
      await page.getByLabel(PICK).setInputFiles({ name: 'excel.csv', mimeType: 'text/csv', buffer: bytes });
      const alert = page.getByRole('alert').filter({ hasText: 'refused' });
      await alert.waitFor();
      assert.equal(
        await alert.innerText(),
        `excel.csv is refused and nothing was sent: row 2, column "name": byte 0xE9 at offset ${text.indexOf('é')} ` +
          'is not UTF-8. Save the file as "CSV UTF-8" or choose its encoding.',
      );
      assert.deepEqual(sent, [], 'no preview and no submission was sent');
      await assertAccessible(page, 'import refused for its encoding');

      // Choosing the encoding reads the same file again.
      await select.selectOption('windows-1252');
      await page.getByTestId('preview-totals').waitFor();
      assert.equal(await alert.count(), 0);
      await sendAll(page, 1);
      assert.deepEqual(await stored(token, 'sofa-1'), {
        name: NAME,
        description: DESCRIPTION,
        skus: ['s-1'],
      });
    });
  },
);

browserTest("Excel's Unicode Text (UTF-16LE with BOM, tab-separated) imports exactly", async (t) => {
  const token = await world.api.token(world.api.tenant('utf16'));
  const text = `${[COLUMNS, sofaRow('sofa-2', 's-2'), sofaRow('sofa-3', 's-3')].map((row) => row.join('\t')).join('\r\n')}\r\n`;
  const page = await world.open(token, '#/import');
  await scenario(t, page, 'import-utf-16', async () => {
    await page
      .getByLabel(PICK)
      .setInputFiles({ name: 'unicode.csv', mimeType: 'text/csv', buffer: Buffer.from(utf16(text, 'le')) });
    const totals = page.getByTestId('preview-totals');
    await totals.waitFor();
    assert.equal((await totals.innerText()).replace(/\s+/g, ' '), 'Create 2 Update 0 Unchanged 0 Invalid 0');
    await sendAll(page, 2);
    assert.deepEqual(await stored(token, 'sofa-2'), { name: NAME, description: DESCRIPTION, skus: ['s-2'] });
    assert.deepEqual(await stored(token, 'sofa-3'), { name: NAME, description: DESCRIPTION, skus: ['s-3'] });
  });
});
