/**
 * The dashboard in headless Chromium against the real service: signing in, a batch's live progress,
 * and importing a file with one bad item through preview, submission, the errors table and the CSV.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import {
  assertAccessible,
  assertFitsWidth,
  browserTest,
  dashboardWorldForFile,
  DESKTOP,
  PHONE,
  refusePreviews,
  scenario,
  screenshot,
} from './dashboard-browser.ts';
import { tenantLockKey } from '../../src/worker/batch-worker.ts';

const world = dashboardWorldForFile();

browserTest('signing in shows the tenant, scopes and expiry; a refused token says 401 and why', async (t) => {
  const tenant = world.api.tenant('signin');
  const token = await world.api.token(tenant, {
    scope: 'ingestions:read ingestions:write',
    ttlSeconds: 600,
  });
  const page = await world.open(null, '#/sign-in');
  await scenario(t, page, 'sign-in-forbidden', async () => {
    await assertAccessible(page, 'sign-in');
    await screenshot(page, 'sign-in', { docs: true });
    // By keyboard only: the token field has the focus, the button is the next stop.
    await page.keyboard.insertText(token);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    assert.equal(await page.getByTestId('tenant').textContent(), tenant);
    assert.equal(await page.getByTestId('scopes').textContent(), 'ingestions:read ingestions:write');
    const expiry = await page.getByTestId('expiry').textContent();
    assert.ok(expiry && !expiry.includes('expired') && expiry !== 'never', `expiry shown as ${expiry}`);
    assert.equal(
      await page.evaluate('location.href.includes(sessionStorage.getItem("catalog-dashboard.token"))'),
      false,
    );
    await page.getByRole('cell', { name: /No batches yet/ }).waitFor();
    await assertAccessible(page, 'batches');

    // The token lacks catalog:read: the view says so in place of a search that would end in a 403.
    await page.getByRole('link', { name: 'Catalog' }).click();
    const note = page.locator('.scope-note');
    await note.waitFor();
    assert.equal(
      await note.textContent(),
      'Your token lacks the catalog:read scope to search the catalog. Sign in with a token that has it to do so.',
    );
    assert.equal(await page.locator('.auth-alert').textContent(), '');
  });

  // A forged signature, then an expired token: their payloads still claim the tenant and scopes,
  // which the page must not show once the service has refused the token.
  const forged = await world.api.token(tenant);
  const expired = await world.api.token(tenant, { ttlSeconds: -60 });
  const refused: Array<[string, string]> = [
    ['forged', `${forged.slice(0, -4)}AAAA`],
    ['expired', expired],
  ];
  for (const [kind, refusedToken] of refused)
    for (const viewport of [DESKTOP, PHONE]) {
      const other = await world.open(null, '#/sign-in', viewport);
      await scenario(t, other, `sign-in-${kind}-${viewport.width}`, async () => {
        await other.getByLabel('Bearer token').fill(refusedToken);
        await other.getByRole('button', { name: 'Sign in' }).click();
        const alert = other.locator('.auth-alert');
        await alert.filter({ hasText: 'Not signed in (401)' }).waitFor();
        assert.match((await alert.textContent()) ?? '', /Sign in again with a valid token/);
        if (kind === 'expired') assert.match((await alert.textContent()) ?? '', /expired/);
        await other.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
        assert.equal(await other.getByTestId('tenant').count(), 0);
        assert.equal(await other.getByTestId('scopes').count(), 0);
        assert.equal(await other.getByTestId('expiry').count(), 0);
        assert.equal(await other.getByRole('button', { name: 'Sign out' }).count(), 0);
        assert.equal(await other.getByRole('button', { name: 'Session' }).isVisible(), false);
        assert.equal(await other.getByRole('navigation', { name: 'Main' }).isVisible(), false);
        assert.equal(await other.evaluate('sessionStorage.getItem("catalog-dashboard.token")'), null);
        assert.equal(new URL(other.url()).hash, '#/sign-in');
        await assertAccessible(other, `sign-in after a 401 (${kind} token) at ${viewport.width} px`);
        if (kind === 'expired' && viewport === PHONE)
          await screenshot(other, 'phone-signed-out', { docs: true });
      });
    }
});

browserTest('a batch that does not exist shows the 404, and no errors to filter or download', async (t) => {
  const token = await world.api.token(world.api.tenant('unknown-batch'));
  const page = await world.open(token, '#/batches/00000000-0000-4000-8000-000000000000');
  await scenario(t, page, 'batch-unknown', async () => {
    await page.getByRole('alert').filter({ hasText: 'No batch with this id.' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Download all errors (CSV)' }).isVisible(), false);
    assert.equal(await page.getByRole('heading', { name: 'Item errors' }).isVisible(), false);
    await assertAccessible(page, 'unknown batch');
  });
});

browserTest('a batch’s progress bar moves to 100 % while the page watches', async (t) => {
  const tenant = world.api.tenant('progress');
  const token = await world.api.token(tenant);
  const page = await world.open(token);
  await scenario(t, page, 'batch-progress', async () => {
    await page.getByRole('cell', { name: /No batches yet/ }).waitFor();
    // The test holds the tenant's lock (as a worker draining it would), so the watched batch is
    // seen waiting at 0 % however fast this machine processes; a later submission wakes the worker,
    // which drains the tenant's batches oldest first while the page watches.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const lock = world.api.service.db.withLock(tenantLockKey(tenant), 0, () => held);
    const thousand = () => Array.from({ length: 1000 }, () => product());
    const batchId = await world.api.submit(token, thousand());
    const bar = page.getByRole('progressbar', { name: `Progress of batch ${batchId}` });
    const seen = [Number(await bar.getAttribute('value'))];
    release();
    assert.notEqual(await lock, null, 'the test held the tenant lock');
    await world.api.submit(token, [product()]);
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const value = Number(await bar.getAttribute('value'));
      if (seen.at(-1) !== value) seen.push(value);
      if (value === 100) break;
      await page.waitForTimeout(50);
    }
    t.diagnostic(`progress values seen: ${seen.join(', ')}`);
    assert.equal(seen.at(-1), 100, `progress seen: ${seen.join(', ')}`);
    assert.equal(seen[0], 0, `the bar started at 0 while the page watched: ${seen.join(', ')}`);
    assert.deepEqual(
      seen,
      [...seen].sort((a, b) => a - b),
      'progress never goes back',
    );
    await page.getByRole('row').filter({ hasText: batchId }).getByText('completed').waitFor();
    await assertAccessible(page, 'batches');
    await screenshot(page, 'batches', { docs: true });
    // The status filter asks the service for that status only.
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('cell', { name: 'No batch is failed.' }).waitFor();
    await page.getByLabel('Status').selectOption('completed');
    await bar.waitFor();
  });

  const phone = await world.open(token, '#/batches', PHONE);
  await scenario(t, phone, 'batches-phone-width', async () => {
    await phone.getByRole('cell', { name: 'completed' }).first().waitFor();
    await assertFitsWidth(phone);
    await screenshot(phone, 'batches-phone-progress');
  });
});

browserTest(
  'importing a file with one bad item: preview, batch with errors, table and CSV show exactly it',
  async (t) => {
    const tenant = world.api.tenant('import');
    const token = await world.api.token(tenant);
    const existing = product({ variants: [variant({ price: 265 })] });
    await world.api.waitForTerminal(token, await world.api.submit(token, [existing]));
    const bad = product({ variants: [variant({ price: -5 })] });
    const [stored] = existing.variants as Array<Record<string, unknown>>;
    const changed = { ...existing, name: 'Renamed sofa', variants: [{ ...stored, price: 250 }, variant()] };
    const items = [product(), changed, bad];
    const badSku = (bad.variants as Array<{ sku: string }>)[0]!.sku;
    const file = items.map((item) => JSON.stringify(item)).join('\n');
    const page = await world.open(token, '#/import');
    await scenario(t, page, 'import', async () => {
      await page.getByLabel(/Drop a JSON, JSON Lines, CSV or XLSX file/).setInputFiles({
        name: 'catalog.jsonl',
        mimeType: 'application/x-ndjson',
        buffer: Buffer.from(file),
      });
      const totals = page.getByTestId('preview-totals');
      await totals.waitFor();
      assert.equal(
        (await totals.innerText()).replace(/\s+/g, ' '),
        'Create 1 Update 1 Unchanged 0 Invalid 1',
      );
      const invalidRow = page.getByRole('row').filter({ hasText: 'invalid' });
      assert.match(await invalidRow.innerText(), /out_of_range\s+variants\[0\]\.price/);
      const updateRow = page.getByRole('row').filter({ hasText: existing.external_id as string });
      // The values of each change (docs/reference.md §11.2): from → to, and "added" for a new variant.
      assert.deepEqual(await updateRow.getByTestId('preview-changes').getByRole('listitem').allInnerTexts(), [
        'name: "Linen sofa" → "Renamed sofa"',
        'variants[0].price: 265 → 250',
        'variants[1]: added',
      ]);
      await assertAccessible(page, 'import preview');
      await screenshot(page, 'import-preview', { docs: true });

      await page.getByRole('button', { name: 'Send all 3 items' }).click();
      const row = page.getByRole('region', { name: 'Submitted batches' }).getByRole('row').nth(1);
      await row.getByText('completed with errors').waitFor({ timeout: 20_000 });
      assert.match(await row.innerText(), /2 upserted, 1 failed/);
      await row.getByRole('link').click();

      await page.getByRole('heading', { name: /^Batch / }).waitFor();
      // Labelled as the command-line client labels its batches: the file's name, then k/n.
      await page.getByText('catalog.jsonl 1/1', { exact: true }).waitFor();
      const errorRows = page.getByRole('region', { name: 'Item errors' }).getByRole('row');
      await errorRows.nth(1).waitFor();
      assert.equal(await errorRows.count(), 2, 'the header and one error');
      assert.deepEqual(
        (await errorRows.nth(1).getByRole('cell').allInnerTexts()).map((text) => text.trim()),
        [
          '2',
          bad.external_id,
          badSku,
          'variants[0].price',
          'out_of_range',
          'variants[0].price must be >= 0.',
        ],
      );
      await page
        .getByRole('region', { name: 'Errors by code' })
        .getByRole('cell', { name: 'out_of_range' })
        .waitFor();
      await assertAccessible(page, 'batch');

      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download all errors (CSV)' }).click(),
      ]);
      const csv = await readFile(await download.path(), 'utf8');
      assert.equal(
        csv,
        `index,external_id,sku,field,code,message\r\n2,${String(bad.external_id)},${badSku},variants[0].price,out_of_range,variants[0].price must be >= 0.\r\n`,
      );
      await screenshot(page, 'batch', { docs: true });
    });
  },
);

browserTest('a 50 MB JSON Lines file is read as a stream without freezing the page', async (t) => {
  const tenant = world.api.tenant('large');
  // The preview is refused (403, as without ingestions:write) after the first group, so the page only
  // reads the file to count its items: this test measures the reading, not the service.
  const token = await world.api.token(tenant);
  const dir = await mkdtemp(path.join(tmpdir(), 'dashboard-large-'));
  const file = path.join(dir, 'large.jsonl');
  const line = `${JSON.stringify(product({ description: 'x'.repeat(600) }))}\n`;
  const count = Math.ceil((50 * 1024 * 1024) / Buffer.byteLength(line));
  await writeFile(file, line.repeat(count));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const page = await world.open(token, '#/import');
  await refusePreviews(page);
  await scenario(t, page, 'import-large', async () => {
    // Long tasks: main-thread work of over 50 ms, during which the page cannot answer input.
    // (A script in the page's terms: Node's PerformanceObserver types know no 'longtask'.)
    await page.evaluate(`
        globalThis.longTasks = [];
        new PerformanceObserver((list) => {
          for (const entry of list.getEntries()) globalThis.longTasks.push(entry.duration);
        }).observe({ type: 'longtask' });
      `);
    const started = Date.now();
    await page.getByLabel(/Drop a JSON, JSON Lines, CSV or XLSX file/).setInputFiles(file);
    await page
      .getByRole('status')
      .filter({ hasText: `large.jsonl: ${count} items read` })
      .waitFor({ timeout: 60_000 });
    const seconds = (Date.now() - started) / 1000;
    const longTasks = await page.evaluate<number[]>('globalThis.longTasks');
    const longest = Math.max(0, ...longTasks);
    t.diagnostic(
      `${count} items (50 MiB) read in ${seconds.toFixed(1)} s; ${longTasks.length} long tasks, the longest ${longest.toFixed(0)} ms`,
    );
    assert.ok(longest < 200, `the page was blocked for ${longest.toFixed(0)} ms at once`);
  });
});

browserTest(
  'an update file that changes 3 of 251 items: the preview opens on the changes, pages through all, the send button stays in reach',
  async (t) => {
    const tenant = world.api.tenant('import-filter');
    const token = await world.api.token(tenant);
    const stored = Array.from({ length: 250 }, (_, i) =>
      product({ external_id: `p-${String(i).padStart(3, '0')}` }),
    );
    await world.api.waitForTerminal(token, await world.api.submit(token, stored));
    const items = [...stored, product({ external_id: 'p-new' })];
    items[10] = { ...stored[10], name: 'Renamed' };
    items[200] = { ...stored[200], description: 'Longer description' };
    const file = items.map((item) => JSON.stringify(item)).join('\n');
    for (const [viewport, name] of [
      [undefined, 'import-preview-changes'],
      [PHONE, 'import-preview-phone'],
    ] as const) {
      const page = await world.open(token, '#/import', viewport);
      await scenario(t, page, name, async () => {
        await page.getByLabel(/Drop a JSON, JSON Lines, CSV or XLSX file/).setInputFiles({
          name: 'update.jsonl',
          mimeType: 'application/x-ndjson',
          buffer: Buffer.from(file),
        });
        await page.getByTestId('preview-totals').waitFor();
        assert.equal(
          await page.getByRole('status').innerText(),
          'update.jsonl: 251 items read; 0 invalid. Will be sent in batches of at most 1000.',
        );
        const filter = page.getByTestId('preview-filter');
        assert.deepEqual(
          await filter
            .getByRole('radio')
            .evaluateAll((radios) =>
              radios.map((radio) => [
                (radio as { value: string }).value,
                (radio as { checked: boolean }).checked,
              ]),
            ),
          [
            ['changes', true],
            ['all', false],
            ['create', false],
            ['update', false],
            ['unchanged', false],
          ],
        );
        assert.deepEqual(
          (await filter.locator('label').allInnerTexts()).map((text) => text.trim()),
          ['Changes (3)', 'All (251)', 'Create (1)', 'Update (2)', 'Unchanged (248)'],
        );
        const region = page.getByRole('region', { name: 'Preview of the items' });
        const ids = async () =>
          (await region.locator('tbody tr').all()).length === 0
            ? []
            : await region.locator('tbody tr td:nth-child(3)').allInnerTexts();
        assert.deepEqual(await ids(), ['p-010', 'p-200', 'p-new']);
        const pager = page.getByTestId('preview-pager');
        assert.match(await pager.innerText(), /Page 1 of 1 \(3 items\)/);
        await assertAccessible(page, `import preview, changes (${name})`);

        await filter.getByLabel('All (251)').check();
        assert.match(await pager.innerText(), /Page 1 of 3 \(251 items\)/);
        assert.equal((await ids()).length, 100);
        await pager.getByRole('button', { name: 'Next page' }).click();
        assert.match(await pager.innerText(), /Page 2 of 3 \(251 items\)/);
        assert.equal((await ids())[0], 'p-100');

        // Scrolled to the end of a long table, the send button is still on the screen.
        await page.evaluate(() =>
          (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 1e6),
        );
        const send = page.getByRole('button', { name: 'Send all 251 items' });
        const box = await send.boundingBox();
        const height = (viewport ?? { height: 800 }).height;
        assert.ok(
          box !== null && box.y >= 0 && box.y + box.height <= height,
          `the button is at ${JSON.stringify(box)}`,
        );
        await filter.getByLabel('Changes (3)').check();
        await page.evaluate(() =>
          (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0),
        );
        if (viewport) await assertFitsWidth(page);
        await screenshot(page, name, { docs: true });
      });
    }
  },
);
