/**
 * The dashboard in headless Chromium against the real service: the catalog (search, a product with
 * its thumbnails, deleting a variant) and webhooks (creating an endpoint, seeing its delivery).
 */
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import {
  assertAccessible,
  assertFitsWidth,
  browserTest,
  dashboardWorldForFile,
  PHONE,
  scenario,
  screenshot,
  submitLabelled,
} from './dashboard-browser.ts';

/** A webhook receiver on loopback: every request it got, answered 204. */
interface Receiver {
  url: string;
  requests: Array<{ headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/catalog`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let receiver: Receiver;

before(async () => {
  receiver = await startReceiver();
});
after(async () => {
  await receiver?.close();
});

const world = dashboardWorldForFile({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' });

browserTest('a product opens with its thumbnails; a variant is deleted after confirmation', async (t) => {
  const tenant = world.api.tenant('catalog');
  const token = await world.api.token(tenant);
  const item = product({
    external_id: 'sofa-linen-3',
    variants: [
      variant({ sku: 'sofa-linen-3-oat', images: [{ url: 'https://cdn.example/oat.png', angle: 0 }] }),
      variant({
        sku: 'sofa-linen-3-slate',
        name: 'Slate linen',
        color: 'Gray',
        images: [{ url: 'https://cdn.example/slate.png', angle: 90 }],
      }),
    ],
  });
  await world.api.waitForTerminal(
    token,
    await world.api.submit(token, [product({ external_id: 'chair-1' }), item]),
  );
  const page = await world.open(token, '#/catalog');
  // The thumbnails' host: the browser asks for them over https; the test answers with a picture.
  // One colour per picture, so the screenshot shows which thumbnail is whose.
  const thumbnails = new Map<string, Buffer>();
  for (const [name, colour] of [
    ['oat', '#c8b99a'],
    ['slate', '#5b6670'],
  ] as const)
    thumbnails.set(
      `https://cdn.example/${name}.png`,
      await sharp({ create: { width: 64, height: 64, channels: 3, background: colour } })
        .png()
        .toBuffer(),
    );
  await page.route('https://cdn.example/**', (route) =>
    route.fulfill({ contentType: 'image/png', body: thumbnails.get(route.request().url()) }),
  );
  await scenario(t, page, 'product-delete', async () => {
    await page.getByRole('link', { name: 'chair-1' }).waitFor();
    await assertAccessible(page, 'catalog');
    await screenshot(page, 'catalog', { docs: true });
    await page.getByLabel('Search', { exact: true }).fill('slate'); // a word of one variant's sku
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page
      .getByTestId('total')
      .filter({ hasText: /^1 product$/ })
      .waitFor();
    assert.deepEqual(
      await page
        .getByRole('region', { name: 'Products matching the search, most relevant first' })
        .getByRole('link')
        .allInnerTexts(),
      ['sofa-linen-3'],
    );
    await page.getByRole('link', { name: 'sofa-linen-3' }).click();

    const images = page.getByRole('img', { name: /image 1/ });
    await images.nth(1).waitFor();
    await page.waitForFunction(() =>
      Array.from(
        (
          globalThis as unknown as {
            document: { images: Array<{ complete: boolean; naturalWidth: number }> };
          }
        ).document.images,
      ).every((image) => image.complete && image.naturalWidth === 64),
    );
    await assertAccessible(page, 'product');
    await screenshot(page, 'product', { docs: true });

    page.once('dialog', (dialog) => {
      assert.equal(dialog.message(), 'Delete variant sofa-linen-3-slate? This cannot be undone.');
      void dialog.accept();
    });
    await page.getByRole('button', { name: 'Delete variant sofa-linen-3-slate' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted variant sofa-linen-3-slate.' }).waitFor();
    await page.getByRole('heading', { name: 'Variants (1)' }).waitFor();
    const stored = await world.api.request({ method: 'GET', url: '/products/sofa-linen-3', token });
    assert.deepEqual(
      stored.json().variants.map((v: { sku: string }) => v.sku),
      ['sofa-linen-3-oat'],
    );
  });
});

browserTest('a product page shows every stored field, and its history after two feeds', async (t) => {
  const token = await world.api.token(world.api.tenant('history'));
  const lamp = (price: number) =>
    product({
      external_id: 'lamp-1',
      name: 'Arc lamp',
      description: 'Floor lamp with a marble base',
      style: 'Industrial',
      type: 'Lighting',
      sub_type: 'Floor Lamp',
      variants: [
        variant({
          sku: 'lamp-1-brass',
          name: 'Brass',
          item_url: 'https://shop.example/lamp-1',
          depth: 30,
          width: 40,
          height: 180,
          weight: 7.5,
          color: 'Gold',
          price,
          brand: 'Northwind',
          images: [
            { url: 'https://cdn.example/lamp-front.png', angle: 0 },
            { url: 'https://cdn.example/lamp-side.png' },
          ],
        }),
      ],
    });
  const monday = await submitLabelled(world.api, token, [lamp(265)], 'Monday feed');
  const tuesday = await submitLabelled(world.api, token, [product(), lamp(250)], 'Tuesday feed');
  const page = await world.open(token, '#/products/lamp-1');
  await page.route('https://cdn.example/**', async (route) =>
    route.fulfill({
      contentType: 'image/png',
      body: await sharp({ create: { width: 64, height: 64, channels: 3, background: '#b08d57' } })
        .png()
        .toBuffer(),
    }),
  );
  await scenario(t, page, 'product-page', async () => {
    const entries = page.getByRole('list', { name: 'Changes, newest first' }).locator(':scope > li');
    await entries.nth(1).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    assert.match(
      facts,
      /External id\s+lamp-1\s+Name\s+Arc lamp\s+Description\s+Floor lamp with a marble base/,
    );
    assert.match(
      facts,
      /Type\s+Lighting\s+Sub-type\s+Floor Lamp\s+Style\s+Industrial\s+Created\s+\S.*\s+Updated\s+\S/,
    );

    const variants = page.getByRole('region', { name: 'Variants' });
    const cells = await variants.getByRole('row').nth(1).getByRole('cell').allInnerTexts();
    assert.deepEqual(cells.slice(0, 8), [
      'lamp-1-brass',
      'Brass',
      'Gold',
      'Northwind',
      '250',
      '30 × 40 × 180',
      '7.5',
      'https://shop.example/lamp-1',
    ]);
    assert.deepEqual(await variants.getByRole('columnheader').allInnerTexts(), [
      'SKU',
      'Name',
      'Colour',
      'Brand',
      'Price',
      'Depth × width × height',
      'Weight',
      'Product page',
      'Images',
      'Actions',
    ]);
    const link = variants.getByRole('link', { name: 'https://shop.example/lamp-1' });
    assert.equal(await link.getAttribute('href'), 'https://shop.example/lamp-1');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.deepEqual(await variants.locator('figcaption').allInnerTexts(), ['0°', 'no angle']);
    await variants.getByRole('img', { name: 'Brass, image 2, no angle' }).waitFor();

    // Newest first: the update by Tuesday's batch (item 1), then the create by Monday's (item 0).
    assert.equal(await entries.count(), 2);
    const [newest, oldest] = [entries.nth(0), entries.nth(1)];
    assert.match(
      await newest.innerText(),
      /^\S.* update by batch Tuesday feed, item 1\n\nvariants\[0\]\.price: 265 → 250$/,
    );
    assert.match(await oldest.innerText(), /^\S.* create by batch Monday feed, item 0\n\nproduct: added$/);
    assert.equal(
      await newest.getByRole('link', { name: 'Tuesday feed' }).getAttribute('href'),
      `#/batches/${tuesday}`,
    );
    assert.equal(
      await oldest.getByRole('link', { name: 'Monday feed' }).getAttribute('href'),
      `#/batches/${monday}`,
    );
    assert.equal(await page.getByRole('button', { name: 'Older' }).isHidden(), true);
    await assertAccessible(page, 'product');
    await screenshot(page, 'product-history', {
      docs: true,
      scrollTo: page.getByRole('heading', { name: 'Variants (1)' }),
    });

    await newest.getByRole('link', { name: 'Tuesday feed' }).click();
    await page.getByRole('heading', { name: new RegExp(tuesday) }).waitFor();
  });
});

browserTest('a long history is read a page at a time, newest first, with "Older"', async (t) => {
  const token = await world.api.token(world.api.tenant('older'));
  // One batch: the create, then 21 price changes, each item newer than the one before (docs/reference.md §11.3).
  const items = Array.from({ length: 22 }, (_, i) =>
    product({ external_id: 'stool-1', variants: [variant({ sku: 'stool-1-oak', price: 100 + i })] }),
  );
  await submitLabelled(world.api, token, items, 'Price walk');
  const page = await world.open(token, '#/products/stool-1');
  await scenario(t, page, 'product-history-older', async () => {
    const entries = page.getByRole('list', { name: 'Changes, newest first' }).locator(':scope > li');
    await entries.nth(19).waitFor();
    assert.equal(await entries.count(), 20);
    assert.match(await entries.nth(0).innerText(), /item 21\n\nvariants\[0\]\.price: 120 → 121$/);
    await page.getByRole('button', { name: 'Older' }).click();
    await entries.nth(21).waitFor();
    assert.equal(await entries.count(), 22);
    assert.match(await entries.nth(20).innerText(), /item 1\n\nvariants\[0\]\.price: 100 → 101$/);
    assert.match(await entries.nth(21).innerText(), / create by batch Price walk, item 0\n\nproduct: added$/);
    assert.equal(await page.getByRole('button', { name: 'Older' }).isHidden(), true);
  });
});

browserTest(
  'a webhook endpoint is created (secret shown once) and its delivery appears in the log',
  async (t) => {
    const tenant = world.api.tenant('hooks');
    const token = await world.api.token(tenant);
    const page = await world.open(token, '#/webhooks');
    await scenario(t, page, 'webhooks', async () => {
      await page.getByRole('cell', { name: 'No endpoints yet.' }).waitFor();
      await page.getByLabel('URL', { exact: true }).fill(receiver.url);
      await page.getByLabel('Description (optional)').fill('Catalog sync');
      await page.getByRole('button', { name: 'Create endpoint' }).click();
      const secretField = page.getByLabel('Signing secret');
      await secretField.waitFor();
      const secret = await secretField.inputValue();
      assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      await page.getByRole('link', { name: receiver.url }).waitFor();
      await assertAccessible(page, 'webhooks');
      await screenshot(page, 'webhooks', { docs: true });

      // A labelled batch, then one without a label: the log names the first by its label.
      const labelledId = await world.api.submit(token, [product()], 'Monday feed 1/1');
      await world.api.waitForTerminal(token, labelledId);
      const batchId = await world.api.submit(token, [product()]);
      await world.api.waitForTerminal(token, batchId);
      await page.getByRole('link', { name: receiver.url }).click();
      const log = page.getByRole('region', { name: 'Deliveries, newest first' });
      const row = log.getByRole('row').filter({ hasText: batchId });
      await row.getByText('delivered').waitFor({ timeout: 20_000 });
      assert.match(await row.innerText(), /batch\.completed/);
      const labelled = log
        .getByRole('row')
        .filter({ has: page.getByRole('link', { name: 'Monday feed 1/1' }) });
      await labelled.getByText('delivered').waitFor({ timeout: 20_000 });
      assert.equal(
        await labelled.getByRole('link', { name: 'Monday feed 1/1' }).getAttribute('href'),
        `#/batches/${labelledId}`,
      );
      assert.equal(await labelled.getByText(labelledId).count(), 0, 'the label, not the id');
      assert.equal(
        await labelled.getByRole('button', { name: /^Redeliver/ }).getAttribute('aria-label'),
        'Redeliver batch.completed of batch Monday feed 1/1',
      );
      await screenshot(page, 'webhook-deliveries', { docs: true });
      await assertAccessible(page, 'webhook deliveries');

      const delivery = receiver.requests.find((request) => request.body.includes(batchId));
      assert.ok(delivery, 'the receiver got the delivery');
      const signed = `${String(delivery.headers['webhook-id'])}.${String(delivery.headers['webhook-timestamp'])}.${delivery.body}`;
      const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
        .update(signed)
        .digest('base64');
      assert.equal(
        delivery.headers['webhook-signature'],
        `v1,${expected}`,
        'signed with the secret the page showed',
      );

      // Redeliver: one more attempt of the same delivery (same webhook-id).
      await row.getByRole('button', { name: /^Redeliver/ }).click();
      await page
        .getByRole('status')
        .filter({ hasText: /is sent again soon/ })
        .waitFor();
      await row.getByRole('cell', { name: '2', exact: true }).waitFor({ timeout: 20_000 });
      const attempts = receiver.requests.filter(
        (request) => request.headers['webhook-id'] === delivery.headers['webhook-id'],
      );
      assert.equal(attempts.length, 2);

      // Rotate: a new secret, shown once.
      await page.getByRole('link', { name: '← All endpoints' }).click();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: `Rotate secret of ${receiver.url}` }).click();
      await page.getByRole('heading', { name: `New secret of ${receiver.url}` }).waitFor();
      const rotated = await page.getByLabel('Signing secret').inputValue();
      assert.match(rotated, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.notEqual(rotated, secret);
    });

    const phone = await world.open(token, '#/webhooks', PHONE);
    await scenario(t, phone, 'webhooks-phone', async () => {
      await phone.getByRole('link', { name: receiver.url }).waitFor();
      await assertFitsWidth(phone);
    });
  },
);
