import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { product } from '../helpers/catalog-fixtures.ts';
import { callService } from '../helpers/process-service.ts';
import { serviceProcessesForFile } from '../helpers/file-fixture.ts';
import { startReceiver, verifies, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * docs/reference.md §10.1, at-least-once for real: the service as its own process, killed (SIGKILL) after a
 * batch ended and before its delivery was acknowledged, then started again on the same data. The
 * delivery recorded by the statement that ended the batch is still sent, with the same webhook-id.
 */

const processes = serviceProcessesForFile('crash-delivery');
let receiver: WebhookReceiver;

before(async () => {
  receiver = await startReceiver();
});

after(async () => {
  await receiver.close();
});

const start = () => processes.start({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' });

/** The service's answer to one request, its body an object. */
const call = callService<Record<string, unknown>>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `predicate` holds, polling; throws after `timeoutMs`. */
async function until<T>(
  what: string,
  read: () => Promise<T>,
  predicate: (value: T) => boolean,
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (predicate(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`${what} not seen within ${timeoutMs} ms: ${JSON.stringify(value)}`);
    await sleep(20);
  }
}

void describe('a crash between batch end and delivery', { timeout: 180_000 }, () => {
  void test('SIGKILL while the receiver holds the first attempt: delivered after the restart, same id', async () => {
    const token = await processes.token(`crash-${randomUUID()}`);
    const first = await start();
    const created = await call(first, token, 'POST', '/webhook-endpoints', { url: receiver.url });
    assert.equal(created.status, 201);
    const endpointSecret = String(created.json.secret);
    const endpointId = String(created.json.id);
    receiver.received.length = 0;
    // The first request kills the service before it is answered: the attempt never completes.
    receiver.answers.push('hang');
    receiver.onRequest = () => first.child.kill('SIGKILL');
    const submitted = await call(first, token, 'POST', '/products/ingestions', { items: [product()] });
    assert.equal(submitted.status, 202);
    const batchId = String(submitted.json.batch_id);
    await receiver.waitFor(1);
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
    receiver.onRequest = undefined;

    const second = await start();
    const [cut, again] = await receiver.waitFor(2, 60_000);
    assert.equal(again!.headers['webhook-id'], cut!.headers['webhook-id']);
    assert.equal(again!.body, cut!.body);
    assert.ok(verifies(endpointSecret, again!));
    assert.equal(JSON.parse(again!.body).data.batch_id, batchId);
    const log = await until(
      'the delivery delivered',
      () => call(second, token, 'GET', `/webhook-endpoints/${endpointId}/deliveries`),
      (res) => (res.json.data as Array<{ status: string }>)[0]?.status === 'delivered',
      10_000,
    );
    const [row] = log.json.data as Array<Record<string, unknown>>;
    assert.equal(row!.id, again!.headers['webhook-id']);
    // The cut attempt never recorded a result: one attempt, the one that delivered.
    assert.equal(row!.attempts, 1);
    second.child.kill('SIGKILL');
    await second.exited;
  });

  void test('SIGKILL as soon as the batch is terminal: its delivery is sent after the restart', async () => {
    const token = await processes.token(`ended-${randomUUID()}`);
    const first = await start();
    const created = await call(first, token, 'POST', '/webhook-endpoints', { url: receiver.url });
    const endpointId = String(created.json.id);
    receiver.received.length = 0;
    const submitted = await call(first, token, 'POST', '/products/ingestions', { items: [product()] });
    const batchId = String(submitted.json.batch_id);
    await until(
      'the batch terminal',
      () => call(first, token, 'GET', `/products/ingestions/${batchId}`),
      (res) => res.json.status === 'completed',
      60_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    const sentBefore = receiver.received.length;

    const second = await start();
    const log = await until(
      'the delivery delivered',
      () => call(second, token, 'GET', `/webhook-endpoints/${endpointId}/deliveries`),
      (res) => (res.json.data as Array<{ status: string }>)[0]?.status === 'delivered',
      60_000,
    );
    const [row] = log.json.data as Array<Record<string, unknown>>;
    assert.equal(row!.batch_id, batchId);
    // Delivered once, or (cut before its result was recorded) again after the restart: never lost.
    assert.ok(receiver.received.length >= 1 && receiver.received.length <= sentBefore + 1);
    assert.ok(receiver.received.every((got) => got.headers['webhook-id'] === row!.id));
    second.child.kill('SIGKILL');
    await second.exited;
  });
});
