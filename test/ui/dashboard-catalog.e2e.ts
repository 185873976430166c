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
    await page.getByLabel('External id starts with').fill('sofa-');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('caption').filter({ hasText: 'starts with “sofa-”' }).waitFor({ state: 'attached' });
    assert.deepEqual(
      await page
        .getByRole('region', { name: /starts with/ })
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

      const batchId = await world.api.submit(token, [product()]);
      await world.api.waitForTerminal(token, batchId);
      await page.getByRole('link', { name: receiver.url }).click();
      const row = page
        .getByRole('region', { name: 'Deliveries, newest first' })
        .getByRole('row')
        .filter({ hasText: batchId });
      await row.getByText('delivered').waitFor({ timeout: 20_000 });
      assert.match(await row.innerText(), /batch\.completed/);
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
