/**
 * The dashboard on a phone (390 × 844, docs/reference.md §11 / issue #47) in headless Chromium against the
 * real service, with data that strains a narrow screen: a batch whose errors carry long messages, a
 * product with long names, SKUs and URLs and several variants, an endpoint with deliveries. Every
 * view fits the width (no page scroll, no region wider than the screen), every table reads as
 * labelled cards, and axe finds nothing. A batch at 100 % still `processing` says "finishing".
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { SETTLED_STATUS_SQL, STATUS_SQL } from '../../src/ingestion/batch-status.ts';
import {
  assertAccessible,
  assertFitsWidth,
  assertLabelledCards,
  browserTest,
  dashboardWorldForFile,
  DESKTOP,
  PHONE,
  scenario,
  screenshot,
} from './dashboard-browser.ts';
import { tenantLockKey } from '../../src/worker/batch-worker.ts';

/** A webhook receiver on loopback that answers 204 to everything. */
let receiver: { url: string; close(): Promise<void> };

before(async () => {
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver = {
    // A long path, as receivers' URLs often are, with no place to break a line.
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/integrations/catalog-sync/webhooks/receive-batch-events-for-tenant-furniture-retailer-eu-west`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
});
after(async () => {
  await receiver?.close();
});

const world = dashboardWorldForFile({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' });

/** One colour, served for every image of the CDN the products name (the browser fetches them). */
const THUMBNAIL = sharp({ create: { width: 64, height: 64, channels: 3, background: '#c8b99a' } })
  .png()
  .toBuffer();

/** A phone-sized tab signed in as `token`, whose images of the CDN are answered, on `hash`. */
async function openPhone(token: string, hash: string): Promise<Page> {
  const page = await world.open(token, '#/batches', PHONE);
  const body = await THUMBNAIL;
  await page.route('https://cdn.example/**', (route) => route.fulfill({ contentType: 'image/png', body }));
  if (hash !== '#/batches') await page.goto(`${world.baseUrl}/ui/${hash}`);
  return page;
}

/** Asserts the (first) button named `name` lies within the phone's width. */
async function assertWithinScreen(page: Page, name: string): Promise<void> {
  const box = await page.getByRole('button', { name }).first().boundingBox();
  assert.ok(box, `${name} is shown`);
  assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width, `${name} spans ${box.x}..${box.x + box.width}`);
}

/** Chromium's own accessibility tree (what a screen reader is given): each node's role and name. */
async function accessibilityTree(page: Page): Promise<Array<{ role: string; name: string }>> {
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
    nodes: Array<{ ignored: boolean; role?: { value: string }; name?: { value: string } }>;
  };
  await cdp.detach();
  return nodes
    .filter((node) => !node.ignored && node.role)
    .map((node) => ({ role: node.role!.value, name: node.name?.value ?? '' }));
}

const LONG_NAME =
  'Extraordinarily comfortable three-seat sofa in washed Belgian linen with removable slipcovers ' +
  'Kompaktmodulsofabezugsstoffmusterkollektion';
const LONG_ID = `sofa-${'belgian-linen-'.repeat(8)}oatmeal`;
/** A batch label as long as a spreadsheet's file name gets: the delivery log names the batch by it. */
const LABEL = 'spring-catalogue-2026-living-room-and-outdoor-collections.csv 1/1';

browserTest(
  'on a 390 px phone every view fits the width, tables read as labelled cards, axe finds nothing',
  async (t) => {
    const tenant = world.api.tenant('phone');
    const token = await world.api.token(tenant);
    const endpoint = await world.api.request({
      method: 'POST',
      url: '/webhook-endpoints',
      token,
      json: { url: receiver.url, events: ['batch.completed', 'batch.completed_with_errors'] },
    });
    assert.equal(endpoint.statusCode, 201, endpoint.body);
    const endpointId = endpoint.json<{ id: string }>().id;

    const sofa = product({
      external_id: LONG_ID,
      name: LONG_NAME,
      description: 'https://shop.example/collections/living-room/sofas/belgian-linen-three-seat-oatmeal',
      variants: ['oat', 'slate', 'rust'].map((colour) =>
        variant({
          sku: `${LONG_ID}-${colour}-SKU0000000000000000000000000000`,
          name: `${colour} washed linen, removable slipcover, feather-wrapped cushions`,
          item_url: `https://shop.example/collections/living-room/sofas/${LONG_ID}-${colour}`,
          images: [1, 2, 3].map((n) => ({
            url: `https://cdn.example/${LONG_ID}/${colour}/${n}.png`,
            angle: n * 30,
          })),
        }),
      ),
    });
    // Two items that fail: a style outside its enumeration (its message lists the allowed values)
    // and a negative price on a variant whose SKU has nowhere to break.
    const badStyle = product({ external_id: `${LONG_ID}-bad-style`, style: 'Brutalist-mid-century' });
    const badPrice = product({
      variants: [variant({ sku: `${'NOBREAK'.repeat(12)}-price`, price: -5 })],
    });
    const submitted = await world.api.request({
      method: 'POST',
      url: `/products/ingestions?label=${encodeURIComponent(LABEL)}`,
      token,
      json: { items: [sofa, badStyle, badPrice] },
    });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const batchId = submitted.json<{ batch_id: string }>().batch_id;
    const status = await world.api.waitForTerminal(token, batchId);
    assert.equal(status.status, 'completed_with_errors');
    const errors = await world.api.allErrors(token, batchId);
    const messages = errors.flatMap((record) =>
      (record.errors as Array<{ message: string }>).map((error) => error.message),
    );
    assert.equal(messages.length, 2);
    assert.ok(
      messages.some((message) => message.length > 100),
      `a long message: ${messages.join(' | ')}`,
    );

    const batches = await openPhone(token, '#/batches');
    await scenario(t, batches, 'phone-batches', async () => {
      const link = batches.getByRole('link', { name: batchId });
      await link.waitFor();
      await assertFitsWidth(batches);
      // Received, Upserted, Failed, Created, Updated included: every field with its label.
      assert.equal(await assertLabelledCards(batches), 9);
      // The id is shortened on screen; a screen reader (the link's name) has it whole.
      const short = link.locator('.long-id-short');
      const whole = link.locator('.long-id-whole');
      assert.equal(await short.innerText(), `${batchId.slice(0, 8)}…`);
      assert.equal(await short.isVisible(), true);
      assert.equal((await whole.boundingBox())?.width, 1, 'the whole id only for screen readers');
      const toggle = batches.getByRole('button', { name: 'whole id' });
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      await screenshot(batches, 'batches-phone', { docs: true });
      // By keyboard: the button follows the link.
      await link.focus();
      await batches.keyboard.press('Tab');
      await batches.keyboard.press('Enter');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
      assert.equal(await short.isVisible(), false);
      assert.equal(await link.innerText(), batchId);
      assert.ok((await whole.boundingBox())!.width > 100, 'the whole id is shown');
      await assertFitsWidth(batches);
      await assertAccessible(batches, 'batches (phone)');
      // Chromium still gives a screen reader a table, though the rows are laid out as cards.
      const tree = await accessibilityTree(batches);
      const named = (role: string) => tree.filter((node) => node.role === role).map((node) => node.name);
      assert.equal(named('table').length, 1);
      assert.deepEqual(named('columnheader'), [
        'Batch',
        'Label',
        'Status',
        'Progress',
        'Received',
        'Upserted',
        'Failed',
        'Created',
        'Updated',
      ]);
      // The cells' names are their values: the labels shown on screen are not read a second time.
      const cells = named('cell');
      assert.equal(cells.length, 9);
      assert.deepEqual(cells.slice(4, 7), ['3', '1', '2']);
      assert.equal(cells[1], String(status.label));
    });

    const batch = await openPhone(token, `#/batches/${batchId}`);
    await scenario(t, batch, 'phone-batch', async () => {
      const errorRows = batch.getByRole('region', { name: 'Item errors' }).getByRole('row');
      await errorRows.nth(2).waitFor();
      await batch.getByRole('region', { name: 'Errors by code' }).getByRole('cell').first().waitFor();
      await assertFitsWidth(batch);
      // The errors by code (2 codes × 4 columns) and the item errors (2 errors × 6 columns).
      assert.equal(await assertLabelledCards(batch), 2 * 4 + 2 * 6);
      for (const message of messages)
        assert.ok((await batch.getByText(message, { exact: true }).boundingBox())!.width <= PHONE.width);
      assert.ok(await batch.getByText(String(status.label)).isVisible(), 'the label is shown');
      await assertAccessible(batch, 'batch (phone)');
      await screenshot(batch, 'batch-phone');
      await screenshot(batch, 'batch-errors-phone', { scrollTo: errorRows.nth(1), docs: true });
    });

    const catalog = await openPhone(token, '#/catalog');
    await scenario(t, catalog, 'phone-catalog', async () => {
      await catalog.getByRole('link', { name: LONG_ID, exact: true }).waitFor();
      await assertFitsWidth(catalog);
      assert.ok((await assertLabelledCards(catalog)) >= 2, 'the product has its cells');
      assert.ok(await catalog.getByText(LONG_NAME).isVisible());
      await assertAccessible(catalog, 'catalog (phone)');
      await screenshot(catalog, 'catalog-phone', {
        scrollTo: catalog.locator('main table').first(),
        docs: true,
      });
    });

    const productPage = await openPhone(token, `#/products/${encodeURIComponent(LONG_ID)}`);
    await scenario(t, productPage, 'phone-product', async () => {
      const variants = sofa.variants as Array<{ sku: string }>;
      for (const { sku } of variants) await productPage.getByText(sku, { exact: true }).waitFor();
      // The thumbnails load lazily: those of the first card, on screen, have loaded.
      await productPage.waitForFunction(() =>
        Array.from(
          (
            globalThis as unknown as {
              document: { images: Array<{ complete: boolean; naturalWidth: number }> };
            }
          ).document.images,
        )
          .slice(0, 3)
          .every((image) => image.complete && image.naturalWidth === 64),
      );
      await assertFitsWidth(productPage);
      assert.ok((await assertLabelledCards(productPage)) >= 3 * 2, 'three variants, in cards');
      for (const { sku } of variants) {
        assert.ok(await productPage.getByText(sku, { exact: true }).isVisible());
        await assertWithinScreen(productPage, `Delete variant ${sku}`);
      }
      await assertAccessible(productPage, 'product (phone)');
      await screenshot(productPage, 'product-phone', {
        scrollTo: productPage.locator('main table').first(),
        docs: true,
      });
    });

    // The endpoint's deliveries: one per finished batch (this tenant's one batch).
    const deadline = Date.now() + 20_000;
    for (;;) {
      const log = await world.api.request({
        method: 'GET',
        url: `/webhook-endpoints/${endpointId}/deliveries`,
        token,
      });
      if (log.json<{ data: Array<{ status: string }> }>().data[0]?.status === 'delivered') break;
      assert.ok(Date.now() < deadline, `no delivery yet: ${log.body}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const webhooks = await openPhone(token, '#/webhooks');
    await scenario(t, webhooks, 'phone-webhooks', async () => {
      await webhooks.getByRole('link', { name: receiver.url }).waitFor();
      await assertFitsWidth(webhooks);
      assert.equal(await assertLabelledCards(webhooks), 6);
      await assertWithinScreen(webhooks, `Rotate secret of ${receiver.url}`);
      await assertWithinScreen(webhooks, `Delete ${receiver.url}`);
      await assertAccessible(webhooks, 'webhooks (phone)');
      await screenshot(webhooks, 'webhooks-phone', { docs: true });

      await webhooks.getByRole('link', { name: receiver.url }).click();
      const log = webhooks.getByRole('region', { name: 'Deliveries, newest first' });
      // The delivery names its batch by the batch's long label, which wraps.
      await log.getByRole('link', { name: LABEL }).waitFor();
      await log.getByText('delivered', { exact: true }).waitFor();
      await assertFitsWidth(webhooks);
      assert.equal(await assertLabelledCards(webhooks), 9);
      await assertWithinScreen(webhooks, `Redeliver batch.completed_with_errors of batch ${LABEL}`);
      await assertAccessible(webhooks, 'webhook deliveries (phone)');
      await screenshot(webhooks, 'webhook-deliveries-phone', { docs: true });
    });

    const signIn = await world.open(null, '#/sign-in', PHONE);
    await scenario(t, signIn, 'phone-sign-in', async () => {
      await signIn.getByLabel('Bearer token').waitFor();
      await assertFitsWidth(signIn);
      await assertAccessible(signIn, 'sign-in (phone)');
    });

    const importPage = await openPhone(token, '#/import');
    await scenario(t, importPage, 'phone-import', async () => {
      await importPage.locator('input[type=file]').setInputFiles({
        name: 'catalog.jsonl',
        mimeType: 'application/x-ndjson',
        buffer: Buffer.from([sofa, badPrice].map((item) => JSON.stringify(item)).join('\n')),
      });
      await importPage.getByTestId('preview-totals').waitFor();
      await assertFitsWidth(importPage);
      await assertAccessible(importPage, 'import (phone)');
    });
  },
);

browserTest('a batch at 100 % that is still processing says it is finishing', async (t) => {
  const tenant = world.api.tenant('finishing');
  const token = await world.api.token(tenant);
  const batchId = await world.api.submit(token, [product(), product(), product({ style: 'Brutalist' })]);
  const done = await world.api.waitForTerminal(token, batchId);
  assert.deepEqual([done.upserted, done.failed, done.received_count], [2, 1, 3]);
  // The moment between the worker's last chunk (committed: every item counted) and the statement
  // that records the terminal status lasts a few milliseconds, too short to catch in a test. So the
  // test takes the tenant's lock, as a worker draining it does (the worker then leaves the tenant
  // alone), and puts the batch's row back in exactly that state: the real API answers what it
  // answers in that moment. It then records the terminal status as the worker's finishBatch does.
  const db = world.api.service.db;
  let release!: () => void;
  let locked!: () => void;
  const taken = new Promise<void>((resolve) => (locked = resolve));
  const lock = db.withLock(tenantLockKey(tenant), 20_000, async () => {
    locked();
    await new Promise<void>((resolve) => (release = resolve));
  });
  // withLock answers null, having run nothing, when the lock was not free in time.
  const held = await Promise.race([taken.then(() => true), lock.then((answer) => answer !== null)]);
  assert.ok(held, 'the test holds the tenant lock');
  t.after(async () => {
    release();
    await lock;
  });
  /** Sets columns of the batch's row (and moves `updated_at`, as every change of the worker does). */
  const setRow = (assignments: string) =>
    db.query(
      `UPDATE batches SET ${assignments}, updated_at = updated_at + interval '1 millisecond'
       WHERE tenant_id = $1 AND id = $2`,
      [tenant, batchId],
    );
  const read = async () =>
    (await world.api.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token })).json<
      Record<string, unknown>
    >();
  const finishing = 'finishing — writing the last results';

  // First as it stood after validation (the failed item counted, nothing written yet): 1 of 3.
  await setRow(`status = ${STATUS_SQL.processing}, upserted = 0`);
  const midway = await read();
  assert.deepEqual([midway.status, midway.upserted, midway.failed], ['processing', 0, 1]);

  const page = await world.open(token, '#/batches', DESKTOP);
  await scenario(t, page, 'finishing', async () => {
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: batchId }) });
    const bar = row.getByRole('progressbar', { name: `Progress of batch ${batchId}` });
    await row.getByText('processing').waitFor();
    assert.equal(await bar.getAttribute('value'), '33');
    assert.equal(await row.getByText(finishing).count(), 0, 'not finishing at 33 %');
    // The last chunk committed: every item counted, the status not yet recorded.
    await setRow('upserted = 2');
    const settled = await read();
    assert.deepEqual([settled.status, settled.upserted, settled.failed], ['processing', 2, 1]);
    await row.getByText(finishing).waitFor();
    assert.equal(await bar.getAttribute('value'), '100');

    await page.getByRole('link', { name: batchId }).click();
    const facts = page.locator('dl.facts');
    await facts.getByText(finishing).waitFor();
    assert.equal(await facts.getByRole('progressbar').getAttribute('value'), '100');
    await assertAccessible(page, 'batch, finishing (desktop)');
    await screenshot(page, 'batch-finishing', { docs: true });
  });

  const phone = await world.open(token, '#/batches', PHONE);
  await scenario(t, phone, 'finishing-phone', async () => {
    const row = phone.getByRole('row').filter({ has: phone.getByRole('link', { name: batchId }) });
    await row.getByText(finishing).waitFor();
    assert.equal(await row.getByText(finishing).isVisible(), true);
    await assertFitsWidth(phone);
    await assertAccessible(phone, 'batches, finishing (phone)');

    await phone.getByRole('link', { name: batchId }).click();
    const facts = phone.locator('dl.facts');
    await facts.getByText(finishing).waitFor();
    await assertFitsWidth(phone);
    await assertAccessible(phone, 'batch, finishing (phone)');
    await screenshot(phone, 'batch-finishing-phone');

    // The terminal status recorded (the statement of the worker's finishBatch): the page, still
    // polling, shows it and drops the words.
    await setRow(`status = ${SETTLED_STATUS_SQL}`);
    await facts.getByText('completed with errors').waitFor();
    assert.equal(await facts.getByText(finishing).count(), 0);
  });
});

browserTest(
  'on a phone the header is one short bar; its Session button shows the facts, by keyboard too',
  async (t) => {
    const tenant = world.api.tenant('header');
    const token = await world.api.token(tenant);
    const phone = await world.open(token, '#/batches', PHONE);
    await scenario(t, phone, 'header-phone', async () => {
      const header = phone.locator('header.topbar');
      const toggle = phone.getByRole('button', { name: 'Session' });
      const height = async () => (await header.boundingBox())!.height;
      assert.ok((await height()) <= 100, `the header is ${await height()} px high`);
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      assert.equal(await phone.getByTestId('tenant').isVisible(), false);
      assert.equal(await phone.getByRole('button', { name: 'Sign out' }).isVisible(), false);
      for (const name of ['Batches', 'Import', 'Catalog', 'Webhooks', 'Analyzer'])
        assert.ok(
          await phone.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).isVisible(),
        );
      await assertFitsWidth(phone);
      await assertAccessible(phone, 'batches with the header collapsed');
      await screenshot(phone, 'header-phone-collapsed');

      // By keyboard: the button is focused and pressed with Enter, then with Space.
      await toggle.focus();
      await phone.keyboard.press('Enter');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'true');
      assert.equal(await phone.getByTestId('tenant').textContent(), tenant);
      assert.ok(await phone.getByTestId('tenant').isVisible());
      assert.ok(await phone.getByTestId('scopes').isVisible());
      assert.ok(await phone.getByTestId('expiry').isVisible());
      assert.ok(await phone.getByRole('button', { name: 'Sign out' }).isVisible());
      await assertFitsWidth(phone);
      await assertAccessible(phone, 'batches with the header expanded');
      await screenshot(phone, 'header-phone-expanded');
      await phone.keyboard.press('Space');
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      assert.equal(await phone.getByTestId('tenant').isVisible(), false);
    });

    const desktop = await world.open(token, '#/batches', DESKTOP);
    await scenario(t, desktop, 'header-desktop', async () => {
      assert.equal(await desktop.getByRole('button', { name: 'Session' }).isVisible(), false);
      assert.equal(await desktop.getByTestId('tenant').textContent(), tenant);
      assert.ok(await desktop.getByTestId('tenant').isVisible());
      assert.ok(await desktop.getByRole('button', { name: 'Sign out' }).isVisible());
    });
  },
);
