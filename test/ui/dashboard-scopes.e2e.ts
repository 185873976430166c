/**
 * The views offer only what the token's scopes allow, and say why the rest is missing (docs/ui.md,
 * Scopes): in headless Chromium at 1280 and 390 px, axe clean.
 */
import assert from 'node:assert/strict';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import {
  assertAccessible,
  assertFitsWidth,
  browserTest,
  dashboardWorldForFile,
  DESKTOP,
  PHONE,
  scenario,
  screenshot,
} from './dashboard-browser.ts';

const world = dashboardWorldForFile();

const note = (scope: string, toDo: string) =>
  `Your token lacks the ${scope} scope ${toDo}. Sign in with a token that has it to do so.`;

browserTest(
  'a token that may only read sees no import, delete, webhook or analyzer action, and why',
  async (t) => {
    const tenant = world.api.tenant('scopes');
    const seeded = product({ variants: [variant(), variant()] });
    const batchId = await world.api.submit(await world.api.token(tenant), [seeded]);
    const reader = await world.api.token(tenant, { scope: 'ingestions:read catalog:read' });
    await world.api.waitForTerminal(reader, batchId);
    const externalId = String(seeded.external_id);

    for (const viewport of [DESKTOP, PHONE]) {
      const page = await world.open(reader, '#/batches', viewport);
      await scenario(t, page, `scopes-read-only-${viewport.width}`, async () => {
        const line = page.locator('.scope-note');

        await page.getByRole('link', { name: batchId }).waitFor();
        assert.equal(await page.getByRole('link', { name: 'Import a file' }).count(), 0);
        assert.deepEqual(await line.allTextContents(), [note('ingestions:write', 'to import files')]);
        await assertFitsWidth(page);
        await assertAccessible(page, `batches without ingestions:write at ${viewport.width} px`);

        await page.evaluate(`location.hash = '#/import'`);
        await page.getByRole('heading', { name: 'Import', level: 1 }).waitFor();
        assert.deepEqual(await line.allTextContents(), [
          note('ingestions:write', 'to preview and submit imports'),
        ]);
        assert.equal(await page.locator('input[type=file]').count(), 0);
        await assertAccessible(page, `import without ingestions:write at ${viewport.width} px`);

        await page.evaluate(`location.hash = ${JSON.stringify(`#/products/${externalId}`)}`);
        await page.getByRole('heading', { name: /Variants \(2\)/ }).waitFor();
        assert.equal(await page.getByRole('button', { name: /Delete/ }).count(), 0);
        assert.equal(await page.getByRole('columnheader', { name: 'Actions' }).count(), 0);
        assert.deepEqual(await line.allTextContents(), [
          note('catalog:write', 'to delete products or variants'),
        ]);
        await assertFitsWidth(page);
        await assertAccessible(page, `product without catalog:write at ${viewport.width} px`);

        await page.evaluate(`location.hash = '#/webhooks'`);
        await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
        assert.deepEqual(await line.allTextContents(), [note('webhooks:manage', 'to list or add endpoints')]);
        assert.equal(await page.getByRole('heading', { name: 'New endpoint' }).count(), 0);
        assert.equal(await page.getByLabel('URL').count(), 0);
        await assertAccessible(page, `webhooks without webhooks:manage at ${viewport.width} px`);
        if (viewport === PHONE) await screenshot(page, 'webhooks-without-scope-phone', { docs: true });

        await page.evaluate(`location.hash = '#/analyzer'`);
        await page.getByRole('heading', { name: 'Analyzer', level: 1 }).waitFor();
        assert.deepEqual(await line.allTextContents(), [note('analysis:run', 'to analyze images')]);
        await assertAccessible(page, `analyzer without analysis:run at ${viewport.width} px`);

        // No call was refused: the page did not send what the token could not do.
        assert.equal(await page.locator('.auth-alert').textContent(), '');
      });
    }

    // Every scope: the actions are there and no line says otherwise.
    const page = await world.open(await world.api.token(tenant), `#/products/${externalId}`);
    await scenario(t, page, 'scopes-all', async () => {
      await page.getByRole('button', { name: 'Delete product' }).waitFor();
      assert.equal(await page.locator('.scope-note').count(), 0);
      await page.evaluate(`location.hash = '#/webhooks'`);
      await page.getByRole('heading', { name: 'New endpoint' }).waitFor();
      await page.evaluate(`location.hash = '#/batches'`);
      await page.getByRole('link', { name: 'Import a file' }).waitFor();
      assert.equal(await page.locator('.scope-note').count(), 0);
    });
  },
);
