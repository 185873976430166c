/**
 * The dashboard's catalog search (docs/reference.md §11.7), downloads (§11.4, §11.5) and batch label search
 * (§11.1) in headless Chromium against the real service: search as you type with accents and
 * filters, the total, the state in the address surviving a reload, the API's 400 beside the form, a
 * late answer never drawn over a newer one, the export and template files, the XLSX 422.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { Download, Page } from 'playwright-core';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import {
  assertAccessible,
  assertFieldsWhole,
  assertFitsWidth,
  browserTest,
  dashboardWorldForFile,
  DESKTOP,
  PHONE,
  scenario,
  screenshot,
  submitLabelled,
} from './dashboard-browser.ts';

const world = dashboardWorldForFile();

/** The external ids the catalog's table links to, in the order shown. */
const shownIds = (page: Page) =>
  page
    .getByRole('region', { name: /^Products/ })
    .getByRole('link')
    .allInnerTexts();

/** The address's hash, decoded, as the page keeps it. */
const hashOf = (page: Page) => decodeURIComponent(new URL(page.url()).hash);

/** Waits until the address's hash holds a page's cursor (`present`), or holds none. */
const cursorInHash = (page: Page, present: boolean) =>
  page.waitForFunction(
    (present) =>
      (globalThis as unknown as { location: { hash: string } }).location.hash.includes('cursor=') === present,
    present,
  );

/** The text of a file the page downloaded. */
async function downloadedText(download: Download): Promise<string> {
  return readFile(await download.path(), 'utf8');
}

browserTest(
  'the catalog searches as you type, with accents and filters, shows the total, and keeps it in the address',
  async (t) => {
    const token = await world.api.token(world.api.tenant('search'));
    await world.api.waitForTerminal(
      token,
      await world.api.submit(token, [
        product({
          external_id: 'garden-table-1',
          name: 'ÄPPLARÖ table, outdoor',
          type: 'Tables',
          sub_type: 'Outdoor Dining Table',
          variants: [variant({ sku: 'gt-1-brown', color: 'Brown', price: 199 })],
        }),
        product({
          external_id: 'garden-chair-1',
          name: 'ÄPPLARÖ chair',
          type: 'Chairs',
          sub_type: 'Outdoor Dining Chair',
          variants: [
            variant({ sku: 'gc-1-brown', color: 'Brown', price: 49 }),
            variant({ sku: 'gc-1-white', color: 'White', price: 59 }),
          ],
        }),
        product({
          external_id: 'garden-bench-1',
          name: 'Applaro bench',
          type: 'Stools & Benches',
          sub_type: 'Outdoor Bench',
          variants: [variant({ sku: 'gb-1', color: 'Brown', price: 129 })],
        }),
        product({ external_id: 'billy-1', name: 'BILLY bookcase', type: 'Storage & Display' }),
      ]),
    );
    const page = await world.open(token, '#/catalog');
    await scenario(t, page, 'catalog-search-flow', async () => {
      const total = page.getByTestId('total');
      await total.filter({ hasText: 'All products, by external id' }).waitFor();
      assert.deepEqual(await shownIds(page), [
        'billy-1',
        'garden-bench-1',
        'garden-chair-1',
        'garden-table-1',
      ]);

      // The box says what it searches, and where a kind of furniture is chosen instead.
      const box = page.getByRole('searchbox', { name: 'Search' });
      assert.equal(
        await box.getAttribute('aria-describedby').then((id) => page.locator(`#${id}`).textContent()),
        'Searches names, external ids, brands and SKUs, not descriptions. For a kind of furniture, choose a Type or Sub-type below.',
      );

      // Typed a key at a time: one search after the pause, accents folded.
      await page.getByLabel('Search', { exact: true }).pressSequentially('applaro', { delay: 30 });
      await total.filter({ hasText: /^3 products$/ }).waitFor();
      assert.deepEqual((await shownIds(page)).sort(), ['garden-bench-1', 'garden-chair-1', 'garden-table-1']);
      assert.equal(hashOf(page), '#/catalog?q=applaro');
      await screenshot(page, 'catalog-search', { docs: true });

      await page.getByLabel('Type', { exact: true }).selectOption('Chairs');
      await total.filter({ hasText: /^1 product$/ }).waitFor();
      assert.deepEqual(await shownIds(page), ['garden-chair-1']);
      assert.equal(hashOf(page), '#/catalog?q=applaro&type=Chairs');

      // A per-variant filter: one variant must hold the colour and the price range together.
      await page.getByLabel('Type', { exact: true }).selectOption('');
      await page.getByLabel('Colour').selectOption('White');
      await page.getByLabel('Max price').fill('50');
      await total.filter({ hasText: /^0 products$/ }).waitFor();
      await page.getByRole('cell', { name: 'No product matches the search.' }).waitFor();
      await page.getByLabel('Max price').fill('59');
      await total.filter({ hasText: /^1 product$/ }).waitFor();
      assert.deepEqual(await shownIds(page), ['garden-chair-1']);
      assert.equal(hashOf(page), '#/catalog?q=applaro&color=White&max_price=59');
      await assertAccessible(page, 'catalog search');

      // A reload (or the link shared) opens the same search.
      await page.reload();
      await total.filter({ hasText: /^1 product$/ }).waitFor();
      assert.equal(await page.getByLabel('Search', { exact: true }).inputValue(), 'applaro');
      assert.equal(await page.getByLabel('Colour').inputValue(), 'White');
      assert.equal(await page.getByLabel('Max price').inputValue(), '59');
      assert.deepEqual(await shownIds(page), ['garden-chair-1']);

      // An invalid filter: the service's 400, naming the parameter, beside the form; no stale rows.
      await page.getByLabel('Min price').fill('abc');
      const message = page.locator('#catalog-message');
      await message.filter({ hasText: 'min_price' }).waitFor();
      assert.equal(
        await message.innerText(),
        'The request was refused (400). The service said: “The request has invalid fields; see errors.”\n\nmin_price must be a finite number.',
      );
      assert.equal(await total.innerText(), '');
      assert.equal(await page.getByRole('region', { name: /^Products/ }).count(), 0);
      await page.getByRole('button', { name: 'Clear' }).click();
      await total.filter({ hasText: 'All products, by external id' }).waitFor();
      assert.equal(await message.innerText(), '');
      assert.equal(hashOf(page), '#/catalog');
      assert.equal((await shownIds(page)).length, 4);
    });
  },
);

browserTest('a late answer to an older search is never drawn over the newer one', async (t) => {
  const token = await world.api.token(world.api.tenant('late'));
  await world.api.waitForTerminal(
    token,
    await world.api.submit(token, [
      product({ external_id: 'billy-1', name: 'BILLY bookcase' }),
      product({ external_id: 'applaro-1', name: 'ÄPPLARÖ bench' }),
    ]),
  );
  const page = await world.open(token, '#/catalog');
  await scenario(t, page, 'catalog-late-answer', async () => {
    await page.getByTestId('total').filter({ hasText: 'All products' }).waitFor();
    // The service's answer to "billy" is held back until after "applaro" has been answered.
    let releaseBilly!: () => void;
    const billyHeld = new Promise<void>((resolve) => (releaseBilly = resolve));
    let billyAsked!: () => void;
    const billySent = new Promise<void>((resolve) => (billyAsked = resolve));
    await page.route(/\/products\?.*q=billy/, async (route) => {
      billyAsked();
      await billyHeld;
      await route.continue().catch(() => undefined); // aborted by the page meanwhile: nothing to continue
    });
    const search = page.getByLabel('Search', { exact: true });
    await search.fill('billy');
    await billySent;
    await search.fill('applaro');
    await page
      .getByTestId('total')
      .filter({ hasText: /^1 product$/ })
      .waitFor();
    assert.deepEqual(await shownIds(page), ['applaro-1']);
    releaseBilly();
    await page.waitForTimeout(500);
    assert.deepEqual(await shownIds(page), ['applaro-1']);
    assert.equal(await page.getByTestId('total').innerText(), '1 product');
    assert.equal(hashOf(page), '#/catalog?q=applaro');
  });
});

browserTest('the page of a search is kept in the address: a reload shows the same page', async (t) => {
  const token = await world.api.token(world.api.tenant('pages'));
  const items = Array.from({ length: 53 }, (_, i) =>
    product({ external_id: `lamp-${String(i).padStart(2, '0')}`, name: `Arc lamp ${i}` }),
  );
  await world.api.waitForTerminal(token, await world.api.submit(token, items));
  const page = await world.open(token, '#/catalog?q=arc%20lamp');
  await scenario(t, page, 'catalog-page-reload', async () => {
    await page
      .getByTestId('total')
      .filter({ hasText: /^53 products$/ })
      .waitFor();
    assert.equal((await shownIds(page)).length, 50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await cursorInHash(page, true);
    const onSecond = await shownIds(page);
    assert.equal(onSecond.length, 3);
    const hash = hashOf(page);
    assert.match(hash, /^#\/catalog\?q=arc\+lamp&cursor=./);

    await page.reload();
    await page
      .getByTestId('total')
      .filter({ hasText: /^53 products$/ })
      .waitFor();
    await page
      .getByRole('region', { name: /^Products/ })
      .getByRole('link')
      .nth(2)
      .waitFor();
    assert.deepEqual(await shownIds(page), onSecond);
    assert.equal(hashOf(page), hash);
    assert.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true);
    // The pages between are not known after a reload: "Previous page" goes to the first.
    await page.getByRole('button', { name: 'Previous page' }).click();
    await cursorInHash(page, false);
    assert.equal((await shownIds(page)).length, 50);
    assert.equal(hashOf(page), '#/catalog?q=arc+lamp');
  });
});

browserTest(
  'downloads: the template is the header row alone, the CSV export starts with it, an XLSX 422 is shown',
  async (t) => {
    const tenant = world.api.tenant('files');
    const token = await world.api.token(tenant);
    await world.api.waitForTerminal(
      token,
      await world.api.submit(token, [
        product({ external_id: 'sofa-1' }),
        product({ external_id: 'sofa-2', description: 'x'.repeat(40_000) }),
      ]),
    );
    const page = await world.open(token, '#/catalog');
    await scenario(t, page, 'catalog-downloads', async () => {
      await page.getByRole('link', { name: 'sofa-2' }).waitFor();
      const today = new Date().toISOString().slice(0, 10);

      const [template] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download template' }).click(),
      ]);
      assert.equal(template.suggestedFilename(), 'catalog-template.csv');
      const header =
        'external_id,name,description,style,type,sub_type,sku,variant_name,item_url,depth,height,width,weight,color,price,brand,' +
        Array.from({ length: 10 }, (_, i) => `image_${i + 1}_url,image_${i + 1}_angle`).join(',');
      assert.equal(await downloadedText(template), `\uFEFF${header}\r\n`);

      const [csv] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download CSV' }).click(),
      ]);
      assert.equal(csv.suggestedFilename(), `catalog-${tenant}-${today}.csv`);
      const rows = (await downloadedText(csv)).split('\r\n');
      assert.equal(`${rows[0]}\r\n`, await downloadedText(template), 'the export’s header is the template');
      assert.equal(rows.length, 4, 'header, two products of one variant each, and the final line break');
      assert.match(rows[1]!, /^sofa-1,Linen sofa,/);

      const [ndjson] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('button', { name: 'Download NDJSON' }).click(),
      ]);
      assert.equal(ndjson.suggestedFilename(), `catalog-${tenant}-${today}.ndjson`);
      const lines = (await downloadedText(ndjson)).trimEnd().split('\n');
      assert.deepEqual(
        lines.map((line) => (JSON.parse(line) as { external_id: string }).external_id),
        ['sofa-1', 'sofa-2'],
      );

      await page.getByRole('button', { name: 'Download XLSX' }).click();
      await page
        .getByRole('alert')
        .filter({ hasText: 'holds a text longer than 32767 characters' })
        .waitFor();
      assert.equal(
        await page.getByRole('region', { name: 'Downloads' }).getByRole('alert').innerText(),
        'The request was refused (422). The service said: “Product "sofa-2" holds a text longer than 32767 characters, more than an XLSX cell holds; export it as CSV or NDJSON, which carry it in full.”',
      );
    });
  },
);

browserTest('batches are searched by the start of their label; the filters survive a reload', async (t) => {
  const token = await world.api.token(world.api.tenant('labels'));
  const spring1 = await submitLabelled(world.api, token, [product()], 'Spring feed 1/2');
  const spring2 = await submitLabelled(
    world.api,
    token,
    [product(), { external_id: 'broken' }],
    'Spring feed 2/2',
  );
  await submitLabelled(world.api, token, [product()], 'Autumn feed');
  const page = await world.open(token, '#/batches');
  const batchIds = () =>
    page.getByRole('region', { name: 'Batches, newest first' }).getByRole('link').allInnerTexts();
  await scenario(t, page, 'batches-label-search', async () => {
    await page.getByRole('cell', { name: 'Autumn feed' }).waitFor();
    const label = page.getByLabel('Label');
    assert.equal(await label.getAttribute('placeholder'), 'Starts with… (case-sensitive)');
    await label.fill('Spring');
    await page.getByRole('cell', { name: 'Autumn feed' }).waitFor({ state: 'detached' });
    assert.deepEqual(await batchIds(), [spring2, spring1]);
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('cell', { name: 'Spring feed 2/2' }).waitFor({ state: 'detached' });
    assert.deepEqual(await batchIds(), [spring1]);
    assert.equal(hashOf(page), '#/batches?status=completed&label=Spring');
    await assertAccessible(page, 'batches');

    await page.reload();
    await page.getByRole('cell', { name: 'Spring feed 1/2' }).waitFor();
    assert.equal(await page.getByLabel('Label').inputValue(), 'Spring');
    assert.equal(await page.getByLabel('Status').inputValue(), 'completed');
    assert.deepEqual(await batchIds(), [spring1]);

    // Case-sensitive, as the service compares.
    await page.getByLabel('Label').fill('spring');
    await page
      .getByRole('cell', { name: 'No batch whose label starts with “spring” is completed.' })
      .waitFor();
    assert.equal(hashOf(page), '#/batches?status=completed&label=spring');
  });

  // Each caption stays with its field and the placeholder shows whole, on a desktop and a phone:
  // the batches' toolbar, a batch's code filter, the catalog's search form, the new endpoint form.
  for (const viewport of [DESKTOP, PHONE]) {
    const view = await world.open(token, '#/batches', viewport);
    await scenario(t, view, `fields-whole-${viewport.width}`, async () => {
      await view.getByRole('cell', { name: 'Autumn feed' }).waitFor();
      assert.equal(await assertFieldsWhole(view), 2);
      await assertFitsWidth(view);
      await assertAccessible(view, `batches at ${viewport.width} px`);
      await view.goto(`${world.baseUrl}/ui/#/batches/${spring2}`);
      await view.getByRole('heading', { name: 'Item errors' }).waitFor();
      assert.equal(await assertFieldsWhole(view), 1);
      await assertFitsWidth(view);
      await view.goto(`${world.baseUrl}/ui/#/catalog`);
      await view.getByRole('searchbox', { name: 'Search' }).waitFor();
      assert.ok((await assertFieldsWhole(view)) >= 7);
      await view.goto(`${world.baseUrl}/ui/#/webhooks`);
      await view.getByRole('heading', { name: 'New endpoint' }).waitFor();
      assert.equal(await assertFieldsWhole(view), 2);
    });
    if (viewport === PHONE) await screenshot(view, 'batches-fields-phone');
  }
});
