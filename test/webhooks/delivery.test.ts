import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { product, withoutName } from '../helpers/catalog-fixtures.ts';
import { startTestServices, type TestService } from '../helpers/test-service.ts';
import type { DeliveryRecord } from '../../src/webhooks/webhook.schemas.ts';
import { startReceiver, verifies, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

/**
 * docs/reference.md §10.1, sending: a real loopback receiver gets the deliveries of terminal batches, signed
 * as Standard Webhooks says, retried with the same webhook-id, and stops at a 410.
 */

let svc: TestService;
let strict: TestService;
/** Retries only after a minute: a delivery answered 503 stays pending through the test. */
let patient: TestService;
const receivers: WebhookReceiver[] = [];

before(async () => {
  [svc, strict, patient] = await startTestServices([
    { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2,0.2' },
    { WEBHOOK_RETRY_SCHEDULE: '0.2' },
    { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_RETRY_SCHEDULE: '60' },
  ] as const);
});

after(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await Promise.all([svc?.stop(), strict?.stop(), patient?.stop()]);
});

async function receiver(): Promise<WebhookReceiver> {
  const started = await startReceiver();
  receivers.push(started);
  return started;
}

interface Created {
  id: string;
  secret: string;
}

async function register(
  service: TestService,
  token: string,
  body: Record<string, unknown>,
): Promise<Created> {
  const res = await service.request({ method: 'POST', url: '/webhook-endpoints', token, json: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json<Created>();
}

/** A fresh tenant with an endpoint on `hook`, and one batch of it ended: its delivery is under way. */
async function endABatchFor(hook: WebhookReceiver): Promise<{ token: string; endpoint: Created }> {
  const token = await svc.token(svc.tenant());
  const endpoint = await register(svc, token, { url: hook.url });
  await svc.waitForTerminal(token, await svc.submit(token, [product()]));
  return { token, endpoint };
}

type DeliveryRow = DeliveryRecord;

async function deliveries(service: TestService, token: string, endpointId: string): Promise<DeliveryRow[]> {
  const res = await service.request({
    method: 'GET',
    url: `/webhook-endpoints/${endpointId}/deliveries`,
    token,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: DeliveryRow[] }>().data;
}

/** Polls the delivery log until `accept` holds for its newest delivery. */
async function waitForDelivery(
  service: TestService,
  token: string,
  endpointId: string,
  accept: (row: DeliveryRow) => boolean,
  timeoutMs = 20_000,
): Promise<DeliveryRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [row] = await deliveries(service, token, endpointId);
    if (row && accept(row)) return row;
    if (Date.now() > deadline) throw new Error(`delivery not as expected: ${JSON.stringify(row)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('a terminal batch is delivered to each subscribed endpoint', () => {
  test('body, headers and a signature that verifies with node:crypto', async () => {
    const hook = await receiver();
    const tenant = svc.tenant();
    const token = await svc.token(tenant);
    const endpoint = await register(svc, token, { url: hook.url });
    const batchId = await svc.submit(token, [product(), product()]);
    const record = await svc.waitForTerminal(token, batchId);
    const [got] = await hook.waitFor(1);
    assert.ok(got);
    assert.deepEqual(JSON.parse(got.body), {
      type: 'batch.completed',
      timestamp: record.updated_at,
      data: record,
    });
    assert.equal(got.headers['content-type'], 'application/json');
    assert.match(String(got.headers['user-agent']), /^catalog-ingestion-service-webhooks\//);
    const timestamp = Number(got.headers['webhook-timestamp']);
    assert.ok(Math.abs(timestamp - Date.now() / 1000) < 30, `webhook-timestamp ${timestamp}`);
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.ok(verifies(endpoint.secret, got));
    assert.equal(verifies(`whsec_${Buffer.alloc(32).toString('base64')}`, got), false);

    const row = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'delivered');
    assert.equal(got.headers['webhook-id'], row.id);
    assert.deepEqual(
      { ...row, created_at: typeof row.created_at, delivered_at: typeof row.delivered_at },
      {
        id: row.id,
        event: 'batch.completed',
        batch_id: batchId,
        status: 'delivered',
        attempts: 1,
        last_status_code: 204,
        last_error: null,
        next_attempt_at: null,
        created_at: 'string',
        delivered_at: 'string',
      },
    );
  });

  test('the log names each batch by its label when it has one (docs/batch-labels.md)', async () => {
    const hook = await receiver();
    const token = await svc.token(svc.tenant());
    const endpoint = await register(svc, token, { url: hook.url });
    const unlabelled = await svc.submit(token, [product()]);
    await svc.waitForTerminal(token, unlabelled);
    const labelled = await svc.submit(token, [product()], 'Tuesday feed 1/2 🛋');
    await svc.waitForTerminal(token, labelled);
    await hook.waitFor(2);

    const rows = await deliveries(svc, token, endpoint.id);
    assert.deepEqual(
      rows.map((row) => [row.batch_id, row.batch_label]),
      [
        [labelled, 'Tuesday feed 1/2 🛋'],
        [unlabelled, undefined],
      ],
    );
    assert.equal('batch_label' in rows[1]!, false, 'a batch without a label: no batch_label at all');
  });

  test('only subscribed events, only enabled endpoints of the same tenant', async () => {
    const hook = await receiver();
    const other = await receiver();
    const tenant = svc.tenant();
    const token = await svc.token(tenant);
    const otherToken = await svc.token(svc.tenant());
    await register(svc, token, { url: hook.url, events: ['batch.completed_with_errors'] });
    await register(svc, otherToken, { url: other.url });
    const done = await svc.submit(token, [product()]);
    await svc.waitForTerminal(token, done);
    const mixed = await svc.submit(token, [product(), withoutName()]);
    const record = await svc.waitForTerminal(token, mixed);
    assert.equal(record.status, 'completed_with_errors');
    const [got] = await hook.waitFor(1);
    assert.equal(JSON.parse(got!.body).data.batch_id, mixed);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(hook.received.length, 1);
    assert.equal(other.received.length, 0);
  });

  test('a failed batch raises batch.failed', async () => {
    const hook = await receiver();
    const token = await svc.token(svc.tenant());
    await register(svc, token, { url: hook.url, events: ['batch.failed'] });
    const batchId = await svc.submit(token, [withoutName()]);
    assert.equal((await svc.waitForTerminal(token, batchId)).status, 'failed');
    const [got] = await hook.waitFor(1);
    assert.equal(JSON.parse(got!.body).type, 'batch.failed');
  });
});

describe('retries', () => {
  test('a 500, then a timeout-free 503, then a 2xx: three attempts with the same webhook-id', async () => {
    const hook = await receiver();
    hook.answers.push(500, 503);
    const { token, endpoint } = await endABatchFor(hook);
    const got = await hook.waitFor(3);
    const ids = new Set(got.map((r) => r.headers['webhook-id']));
    assert.equal(ids.size, 1);
    assert.ok(got.every((r) => verifies(endpoint.secret, r)));
    assert.ok(got[1]!.at - got[0]!.at >= 200, 'the schedule’s first delay was kept');
    const row = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'delivered');
    assert.equal(row.attempts, 3);
    assert.equal(row.last_status_code, 204);
    assert.equal(row.last_error, null);
  });

  test('after the last delay of the schedule the delivery is failed', async () => {
    const hook = await receiver();
    hook.fallback = 500;
    const { token, endpoint } = await endABatchFor(hook);
    const row = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'failed');
    assert.equal(row.attempts, 3);
    assert.equal(row.last_status_code, 500);
    assert.equal(row.last_error, 'The endpoint answered HTTP 500');
    assert.equal(row.next_attempt_at, null);
    assert.equal(hook.received.length, 3);
  });

  test('a redirect is not followed: it is an answer to retry', async () => {
    const target = await receiver();
    const hook = await receiver();
    hook.fallback = 307;
    const { token, endpoint } = await endABatchFor(hook);
    const row = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'failed');
    assert.equal(row.last_status_code, 307);
    assert.equal(target.received.length, 0);
  });

  test('redeliver: one new attempt soon, same id', async () => {
    const hook = await receiver();
    hook.fallback = 500;
    const { token, endpoint } = await endABatchFor(hook);
    const failed = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'failed');
    hook.fallback = 200;
    const res = await svc.request({
      method: 'POST',
      url: `/webhook-endpoints/${endpoint.id}/deliveries/${failed.id}/redeliver`,
      token,
    });
    assert.equal(res.statusCode, 202, res.body);
    const row = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'delivered');
    assert.equal(row.id, failed.id);
    assert.equal(row.attempts, 4);
    assert.equal(hook.received.length, 4);
    assert.equal(hook.received[3]!.headers['webhook-id'], failed.id);

    // A redelivery that fails again is one attempt, not a new schedule.
    hook.fallback = 500;
    const again = await svc.request({
      method: 'POST',
      url: `/webhook-endpoints/${endpoint.id}/deliveries/${failed.id}/redeliver`,
      token,
    });
    assert.equal(again.statusCode, 202);
    const refailed = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'failed');
    assert.equal(refailed.attempts, 5);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(hook.received.length, 5);
  });
});

describe('410 Gone', () => {
  test('disables the endpoint and fails its pending deliveries', async () => {
    const hook = await receiver();
    hook.answers.push(410);
    const { token, endpoint } = await endABatchFor(hook);
    const row = await waitForDelivery(svc, token, endpoint.id, (r) => r.status === 'failed');
    assert.equal(row.attempts, 1);
    assert.equal(row.last_status_code, 410);
    const read = await svc.request({ method: 'GET', url: `/webhook-endpoints/${endpoint.id}`, token });
    assert.equal(read.json<{ enabled: boolean }>().enabled, false);
    // A disabled endpoint gets no more deliveries.
    await svc.waitForTerminal(token, await svc.submit(token, [product()]));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(hook.received.length, 1);
    assert.equal((await deliveries(svc, token, endpoint.id)).length, 1);

    // Redelivering: its own delivery 409; an unknown or malformed delivery id 404, as when enabled.
    const redeliver = (deliveryId: string) =>
      svc.request({
        method: 'POST',
        url: `/webhook-endpoints/${endpoint.id}/deliveries/${deliveryId}/redeliver`,
        token,
      });
    const own = await redeliver(row.id);
    assert.equal(own.statusCode, 409, own.body);
    assert.equal(
      own.json<{ detail: string }>().detail,
      'This endpoint is disabled (its URL answered 410 Gone); create a new endpoint to receive deliveries again.',
    );
    for (const unknown of ['0190a000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const res = await redeliver(unknown);
      assert.equal(res.statusCode, 404, res.body);
      assert.equal(res.json<{ detail: string }>().detail, 'No delivery with this id for this endpoint.');
    }
    assert.equal((await deliveries(svc, token, endpoint.id))[0]?.status, 'failed');
  });
});

describe("410 Gone and the endpoint's other deliveries", () => {
  const DISABLED = 'the endpoint answered HTTP 410 Gone to another delivery and was disabled';
  /** The delivery that heard the 410, as its log row reads (see `logOf`). */
  const HEARD_GONE = ['failed', 1, 410, 'The endpoint answered HTTP 410 Gone: it is now disabled', null];
  /** The delivery log, oldest first, as the columns these tests are about. */
  const logOf = (rows: DeliveryRow[]) =>
    rows.reverse().map((r) => [r.status, r.attempts, r.last_status_code, r.last_error, r.next_attempt_at]);

  test('one waiting for its retry ends as failed: not retried, its last answer kept', async () => {
    const hook = await receiver();
    hook.answers.push(503, 410);
    const token = await patient.token(patient.tenant());
    const endpoint = await register(patient, token, { url: hook.url });
    await patient.waitForTerminal(token, await patient.submit(token, [product()]));
    await waitForDelivery(patient, token, endpoint.id, (r) => r.attempts === 1);
    await patient.waitForTerminal(token, await patient.submit(token, [product()]));
    await waitForDelivery(patient, token, endpoint.id, (r) => r.status === 'failed');
    assert.deepEqual(logOf(await deliveries(patient, token, endpoint.id)), [
      ['failed', 1, 503, `Not retried: ${DISABLED}`, null],
      HEARD_GONE,
    ]);
    assert.equal(hook.received.length, 2);
  });

  /**
   * Two deliveries to one endpoint: the first is held by the receiver while the second is answered
   * 410, then the first is answered `lateAnswer`. Returns the log once both ended, and the receiver.
   */
  async function goneWhileInFlight(lateAnswer: number) {
    const hook = await receiver();
    let answerFirst!: (status: number) => void;
    hook.answers.push(new Promise<number>((resolve) => (answerFirst = resolve)), 410);
    const token = await svc.token(svc.tenant());
    const endpoint = await register(svc, token, { url: hook.url });
    await svc.waitForTerminal(token, await svc.submit(token, [product()]));
    await hook.waitFor(1);
    await svc.waitForTerminal(token, await svc.submit(token, [product()]));
    await hook.waitFor(2);
    const endpointRead = async () =>
      (await svc.request({ method: 'GET', url: `/webhook-endpoints/${endpoint.id}`, token })).json<{
        enabled: boolean;
      }>();
    const deadline = Date.now() + 20_000;
    while ((await endpointRead()).enabled) {
      assert.ok(Date.now() < deadline, 'the 410 did not disable the endpoint');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The held delivery is still being attempted: the 410 did not end it on its behalf.
    const [, held] = await deliveries(svc, token, endpoint.id);
    assert.equal(held?.status, 'pending');
    answerFirst(lateAnswer);
    for (;;) {
      const rows = await deliveries(svc, token, endpoint.id);
      if (rows.every((row) => row.status !== 'pending')) return { log: logOf(rows), hook };
      assert.ok(Date.now() < deadline + 20_000, JSON.stringify(rows));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  test('one in flight records what its own attempt heard: delivered', async () => {
    const { log, hook } = await goneWhileInFlight(204);
    assert.deepEqual(log, [['delivered', 1, 204, null, null], HEARD_GONE]);
    assert.equal(hook.received.length, 2);
  });

  test('one in flight whose answer would be retried ends as failed, saying why it is not retried', async () => {
    const { log, hook } = await goneWhileInFlight(503);
    assert.deepEqual(log, [
      ['failed', 1, 503, `The endpoint answered HTTP 503; not retried: ${DISABLED}`, null],
      HEARD_GONE,
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(hook.received.length, 2);
  });
});

describe('secret rotation', () => {
  test('for 24 h both secrets sign: two signatures, each verifies', async () => {
    const hook = await receiver();
    const token = await svc.token(svc.tenant());
    const endpoint = await register(svc, token, { url: hook.url });
    const res = await svc.request({
      method: 'POST',
      url: `/webhook-endpoints/${endpoint.id}/rotate-secret`,
      token,
    });
    assert.equal(res.statusCode, 200, res.body);
    const { secret } = res.json<{ secret: string }>();
    assert.notEqual(secret, endpoint.secret);
    await svc.waitForTerminal(token, await svc.submit(token, [product()]));
    const [got] = await hook.waitFor(1);
    const signatures = String(got!.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2);
    assert.ok(
      verifies(secret, { ...got!, headers: { ...got!.headers, 'webhook-signature': signatures[0] } }),
    );
    assert.ok(
      verifies(endpoint.secret, {
        ...got!,
        headers: { ...got!.headers, 'webhook-signature': signatures[1] },
      }),
    );
  });
});

describe('address policy', () => {
  test('without WEBHOOK_ALLOW_PRIVATE_HOSTS a loopback URL fails its attempts, saying why', async () => {
    const hook = await receiver();
    const token = await strict.token(strict.tenant());
    const url = hook.url.replace('http:', 'https:');
    const endpoint = await register(strict, token, { url });
    await strict.waitForTerminal(token, await strict.submit(token, [product()]));
    const row = await waitForDelivery(strict, token, endpoint.id, (r) => r.status === 'failed');
    assert.equal(row.attempts, 2);
    assert.equal(row.last_status_code, null);
    assert.equal(row.last_error, 'Blocked address: 127.0.0.1 is a loopback address');
    assert.equal(hook.received.length, 0);
  });

  test('a name that resolves to loopback is refused without naming the address', async () => {
    const token = await strict.token(strict.tenant());
    const endpoint = await register(strict, token, { url: 'https://localhost:9/hooks' });
    await strict.waitForTerminal(token, await strict.submit(token, [product()]));
    const row = await waitForDelivery(strict, token, endpoint.id, (r) => r.status === 'failed');
    assert.equal(row.last_error, 'Blocked address: localhost resolves to a loopback address');
  });
});

describe('batches never wait for deliveries', () => {
  test('a receiver that never answers: the next batches still reach their terminal status', async () => {
    const hook = await receiver();
    hook.fallback = 'hang';
    const { token, endpoint } = await endABatchFor(hook);
    await hook.waitFor(1);
    // The attempt is still waiting for its answer while further batches run and end.
    for (let i = 0; i < 3; i++) {
      const record = await svc.waitForTerminal(token, await svc.submit(token, [product()]), 10_000);
      assert.equal(record.status, 'completed');
    }
    const rows = await deliveries(svc, token, endpoint.id);
    assert.equal(rows.length, 4);
    assert.ok(rows.every((row) => row.status === 'pending'));
  });
});

describe('metrics', () => {
  test('attempts by outcome, attempt latency, and the oldest pending delivery’s age', async () => {
    // The strict service made exactly the attempts of the address-policy tests above: two per
    // delivery, both refused, the first retried.
    const strictText = await strict.service.metrics.render();
    assert.match(strictText, /^webhook_deliveries_total\{outcome="retry"\} 2$/m);
    assert.match(strictText, /^webhook_deliveries_total\{outcome="failed"\} 2$/m);
    assert.match(strictText, /^webhook_attempt_duration_seconds_count 4$/m);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.match(await strict.service.metrics.render(), /^webhook_oldest_pending_delivery_seconds 0$/m);
    // The receiver that never answers keeps deliveries pending on the other service.
    const text = await svc.service.metrics.render();
    const age = Number(/^webhook_oldest_pending_delivery_seconds (\S+)$/m.exec(text)?.[1]);
    assert.ok(age > 0, `oldest pending age ${age}`);
    assert.match(text, /^webhook_deliveries_total\{outcome="delivered"\} \d+$/m);
  });
});
