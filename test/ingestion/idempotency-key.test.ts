import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { testServicesForFile, type TestService } from '../helpers/test-service.ts';
import { bodyOverLimit, product } from '../helpers/catalog-fixtures.ts';
import { assertProblem } from '../helpers/assertions.ts';
import { startSecondWorker } from '../helpers/second-worker.ts';

/** docs/reference.md §10.2: the optional `Idempotency-Key` of `POST /products/ingestions`. */

const PATH = '/products/ingestions';
const [svc, limited, queued] = testServicesForFile([
  {},
  { RATE_LIMIT_PER_MINUTE: '1' },
  // No worker: nothing drains, so the backlog only grows.
  { ROLE: 'api', MAX_PENDING_ITEMS: '3' },
]);

const post = (s: TestService, token: string, body: string | Buffer, key?: string) =>
  s.request({
    method: 'POST',
    url: PATH,
    token,
    body,
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
  });

const bodyOf = (items: unknown[]) => JSON.stringify({ items });

const batchIds = async (s: TestService, token: string) =>
  (await s.request({ method: 'GET', url: `${PATH}?limit=100`, token }))
    .json<{ data: Array<{ batch_id: string }> }>()
    .data.map((batch) => batch.batch_id)
    .sort();

/** The keys a tenant holds, read from the database itself. */
const storedKeys = async (s: TestService, tenant: string) =>
  (
    await s.service.db.query<{ key: string }>(
      `SELECT key FROM idempotency_keys WHERE tenant_id = $1 ORDER BY key`,
      [tenant],
    )
  ).map((row) => row.key);

function assertAccepted(
  res: LightMyRequestResponse,
  replayed: boolean,
): { batch_id: string; received_count: number } {
  assert.equal(res.statusCode, 202, res.body);
  const accepted = res.json<{ batch_id: string; received_count: number }>();
  assert.equal(res.headers.location, `${PATH}/${accepted.batch_id}`);
  assert.equal(res.headers['idempotent-replayed'], replayed ? 'true' : undefined);
  return accepted;
}

async function fresh(s: TestService = svc) {
  const tenant = s.tenant('idem');
  return { tenant, token: await s.token(tenant) };
}

describe('Idempotency-Key: replays and mismatches', () => {
  void test('without the header, docs/reference.md §4 holds: the same body twice is two batches, no replay header', async () => {
    const { token } = await fresh();
    const body = bodyOf([product()]);
    const first = assertAccepted(await post(svc, token, body), false);
    const second = assertAccepted(await post(svc, token, body), false);
    assert.notEqual(first.batch_id, second.batch_id);
    assert.deepEqual(await batchIds(svc, token), [first.batch_id, second.batch_id].sort());
  });

  void test('the same key with the same body: 202, the first body and Location, Idempotent-Replayed, no new batch', async () => {
    const { tenant, token } = await fresh();
    const body = bodyOf([product(), product()]);
    const firstRes = await post(svc, token, body, 'order-42');
    const first = assertAccepted(firstRes, false);
    assert.deepEqual(first, { batch_id: first.batch_id, received_count: 2 });
    // Again once the batch is processed: the answer is the first one, whatever happened since.
    await svc.waitForTerminal(token, first.batch_id);
    const againRes = await post(svc, token, body, 'order-42');
    assert.deepEqual(assertAccepted(againRes, true), first);
    assert.equal(againRes.body, firstRes.body);
    assert.deepEqual(await batchIds(svc, token), [first.batch_id]);
    assert.deepEqual(await storedKeys(svc, tenant), ['order-42']);
  });

  void test('the same key with a different body is 422 idempotency-key-mismatch, and nothing is stored', async () => {
    const { token } = await fresh();
    const items = [product()];
    const first = assertAccepted(await post(svc, token, bodyOf(items), 'k-1'), false);
    const res = await post(svc, token, bodyOf([product()]), 'k-1');
    assertProblem(res, { slug: 'idempotency-key-mismatch', instance: PATH });
    // The hash is of the bytes: the same JSON written with other white space is another body.
    const spaced = JSON.stringify({ items }, null, 2);
    assert.equal((await post(svc, token, spaced, 'k-1')).statusCode, 422);
    assert.deepEqual(await batchIds(svc, token), [first.batch_id]);
  });

  void test('keys are per tenant: another tenant’s use of a key is its own', async () => {
    const a = await fresh();
    const b = await fresh();
    const body = bodyOf([product()]);
    const first = assertAccepted(await post(svc, a.token, body, 'shared'), false);
    const other = assertAccepted(await post(svc, b.token, body, 'shared'), false);
    assert.notEqual(first.batch_id, other.batch_id);
  });

  void test('ten requests with one key at the same moment create one batch, and all answer it', async () => {
    const { token } = await fresh();
    const body = bodyOf([product(), product(), product()]);
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(svc, token, body, 'twins')));
    const accepted = answers.map((res) => res.json<{ batch_id: string; received_count: number }>());
    assert.deepEqual(
      answers.map((res) => res.statusCode),
      Array.from({ length: 10 }, () => 202),
    );
    assert.equal(new Set(accepted.map((a) => a.batch_id)).size, 1);
    assert.equal(answers.filter((res) => res.headers['idempotent-replayed'] === 'true').length, 9);
    assert.deepEqual(await batchIds(svc, token), [accepted[0]!.batch_id]);
  });

  void test('a replay needs no room in the backlog: its batch is already counted', async () => {
    const { token } = await fresh(queued);
    const body = bodyOf([product(), product()]);
    const first = assertAccepted(await post(queued, token, body, 'roomy'), false);
    // Backlog 2 of 3: a new 2-item batch would pass the limit, the replay of this one does not.
    assert.equal((await post(queued, token, bodyOf([product(), product()]))).statusCode, 429);
    assert.deepEqual(assertAccepted(await post(queued, token, body, 'roomy'), true), first);
  });
});

describe('Idempotency-Key: malformed values, refusals, expiry', () => {
  void test('a value that is not 1–255 visible ASCII characters is 400 naming the header; nothing is stored', async () => {
    const { tenant, token } = await fresh();
    const body = bodyOf([product()]);
    for (const key of ['', 'with space', 'x'.repeat(256), 'caf\u00e9', 'tab\there']) {
      const res = await post(svc, token, body, key);
      const problem = assertProblem(res, {
        slug: 'validation-error',
        instance: PATH,
        errors: [{ field: 'Idempotency-Key', code: 'invalid_format' }],
      });
      assert.ok(problem.errors, key);
    }
    assert.deepEqual(await batchIds(svc, token), []);
    assert.deepEqual(await storedKeys(svc, tenant), []);
    assertAccepted(await post(svc, token, body, `!~${'x'.repeat(253)}`), false);
  });

  void test('a request refused with 400 or 413 does not consume the key', async () => {
    const { tenant, token } = await fresh();
    assertProblem(await post(svc, token, bodyOf([]), 'retry-me'), {
      slug: 'validation-error',
      instance: PATH,
      errors: [{ field: 'items', code: 'too_few_items' }],
    });
    assertProblem(await post(svc, token, '{"items": [', 'retry-me'), {
      slug: 'malformed-json',
      instance: PATH,
    });
    assertProblem(await post(svc, token, bodyOverLimit(), 'retry-me'), {
      slug: 'payload-too-large',
      instance: PATH,
    });
    assert.deepEqual(await storedKeys(svc, tenant), []);
    // A body of its own, not a replay: the key was free.
    assertAccepted(await post(svc, token, bodyOf([product()]), 'retry-me'), false);
    assert.deepEqual(await storedKeys(svc, tenant), ['retry-me']);
  });

  void test('a request refused with 429 does not consume the key (submission rate and backlog)', async () => {
    const rate = await fresh(limited);
    const into = Date.now() % 60_000;
    if (into > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - into + 250));
    assertAccepted(await post(limited, rate.token, bodyOf([product()])), false);
    const refused = await post(limited, rate.token, bodyOf([product()]), 'after-429');
    assert.equal(refused.statusCode, 429, refused.body);
    assert.deepEqual(await storedKeys(limited, rate.tenant), []);

    // The backlog's 429 comes inside the transaction that took the key: it is rolled back with it.
    const backlog = await fresh(queued);
    assertAccepted(await post(queued, backlog.token, bodyOf([product(), product()])), false);
    const full = await post(queued, backlog.token, bodyOf([product(), product()]), 'after-backlog');
    assert.equal(full.statusCode, 429, full.body);
    assert.deepEqual(await storedKeys(queued, backlog.tenant), []);
    // Another body with that key is a new submission, not a mismatch.
    assertAccepted(await post(queued, backlog.token, bodyOf([product()]), 'after-backlog'), false);
  });

  void test('a key is remembered 24 hours: then it is free again, and the worker’s sweep deletes it', async () => {
    const { tenant, token } = await fresh();
    const first = assertAccepted(await post(svc, token, bodyOf([product()]), 'daily'), false);
    const age = () =>
      svc.service.db.query(
        `UPDATE idempotency_keys SET created_at = created_at - interval '24 hours 1 second' WHERE tenant_id = $1`,
        [tenant],
      );
    await age();
    const second = assertAccepted(await post(svc, token, bodyOf([product()]), 'daily'), false);
    assert.notEqual(second.batch_id, first.batch_id);
    assert.deepEqual(
      assertAccepted(await post(svc, token, bodyOf([product()]), 'other'), false).received_count,
      1,
    );
    await age();
    // The sweep a worker runs as it starts.
    const worker = await startSecondWorker(svc, {});
    await worker.stop(5_000);
    assert.deepEqual(await storedKeys(svc, tenant), []);
  });
});
