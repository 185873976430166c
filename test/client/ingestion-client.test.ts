import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClientError, createIngestionClient, DEFAULT_BACKOFF_MS } from '../../src/client/ingestion-client.ts';
import { retryAfterMs } from '../../src/import-pipeline/retry-after.ts';
import { accepted, fakeService, problem, type Answer } from '../helpers/fake-ingestion-service.ts';

void describe('ingestion client retries', () => {
  void test('Retry-After is read as seconds or a date', () => {
    assert.equal(retryAfterMs('3'), 3000);
    assert.equal(retryAfterMs('0'), 0);
    assert.equal(retryAfterMs(null), 1000);
    assert.equal(retryAfterMs('soon'), 1000);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', Date.parse('2026-01-01T00:00:00Z')), 10_000);
  });

  void test('a 429 waits Retry-After and sends the same batch again; 5xx are retried with backoff', async () => {
    const answers: Answer[] = [
      { ...problem(429, 'slow down'), headers: { 'retry-after': '1' } },
      problem(503, 'busy'),
      problem(502, 'gateway'),
      accepted('b-1', 2),
    ];
    const service = await fakeService(() => answers.shift()!);
    const waits: Array<[string, number]> = [];
    const client = createIngestionClient({
      baseUrl: `${service.url}/`,
      token: 'tok',
      backoffMs: [5, 10],
      onRetry: (reason, ms) => waits.push([reason, ms]),
    });
    const body = '{"items":[1,{"a":1.10}]}';
    const started = performance.now();
    assert.deepEqual(await client.submit(body), { batch_id: 'b-1', received_count: 2, replayed: false });
    assert.ok(performance.now() - started >= 1000, 'waited the second Retry-After asked for');
    assert.deepEqual(waits, [
      ['POST /products/ingestions answered 429 (slow down)', 1000],
      ['POST /products/ingestions answered 503: busy', 5],
      ['POST /products/ingestions answered 502: gateway', 10],
    ]);
    assert.deepEqual(
      service.requests.map((r) => [r.method, r.url, r.body]),
      Array.from({ length: 4 }, () => ['POST', '/products/ingestions', body]),
    );
    await service.close();
  });

  void test('5xx after every retry, and 401, end in a ClientError; a 401 is not retried', async () => {
    const failing = await fakeService(() => problem(500, 'boom'));
    const client = createIngestionClient({ baseUrl: failing.url, token: 'tok', backoffMs: [1, 1, 1] });
    await assert.rejects(client.submit('{"items":[1]}'), {
      name: 'Error',
      message: 'POST /products/ingestions answered 500: boom (gave up after 4 attempts)',
    });
    assert.equal(failing.requests.length, 4);
    await failing.close();

    const refusing = await fakeService(() => problem(401, 'The bearer token has expired.'));
    const refused = createIngestionClient({ baseUrl: refusing.url, token: 'tok', backoffMs: [1] });
    await assert.rejects(refused.submit('{"items":[1]}'), (error: unknown) => {
      assert.ok(error instanceof ClientError);
      assert.equal(error.status, 401);
      assert.equal(error.message, 'the service refused the token: 401 The bearer token has expired.');
      return true;
    });
    assert.equal(refusing.requests.length, 1);
    await refusing.close();
  });

  void test('by default a 5xx or network failure is retried for about a minute before the run stops', () => {
    assert.deepEqual(DEFAULT_BACKOFF_MS, [500, 1000, 2000, 4000, 8000, 15_000, 30_000]);
    assert.equal(
      DEFAULT_BACKOFF_MS.reduce((sum, ms) => sum + ms, 0),
      60_500,
    );
  });
});

void describe('ingestion client: connections, labels and replays', () => {
  void test('once the service has answered, a refused connection is retried, then reported with its cause', async () => {
    const gone = await fakeService(() => ({ status: 202, body: { batch_id: 'b-1', received_count: 1 } }));
    const client = createIngestionClient({
      baseUrl: gone.url,
      token: 'tok',
      backoffMs: [1],
      addressHint: 'hint',
    });
    await client.submit('{"items":[1]}');
    await gone.close();
    await assert.rejects(client.submit('{"items":[1]}'), {
      message: `cannot reach ${gone.url}: ECONNREFUSED (gave up after 2 attempts)`,
    });
  });

  void test('a refused connection before the service ever answered fails at once, with the address hint', async () => {
    const gone = await fakeService(() => problem(500, 'x'));
    await gone.close();
    const retries: string[] = [];
    const client = createIngestionClient({
      baseUrl: gone.url,
      token: 'tok',
      backoffMs: [60_000],
      onRetry: (reason) => retries.push(reason),
      addressHint: 'check --url',
    });
    await assert.rejects(client.submit('{"items":[1]}'), {
      message: `cannot reach ${gone.url}: ECONNREFUSED (check --url)`,
    });
    assert.deepEqual(retries, []);
  });

  void test('a label goes in the query, escaped; a replay is told by Idempotent-Replayed: true', async () => {
    const answers: Answer[] = [
      accepted('b-1', 1),
      { ...accepted('b-1', 1), headers: { 'idempotent-replayed': 'true' } },
    ];
    const service = await fakeService(() => answers.shift()!);
    const client = createIngestionClient({ baseUrl: service.url, token: 'tok', backoffMs: [] });
    const options = { idempotencyKey: 'k', label: 'feed & co 1/2' };
    assert.deepEqual(await client.submit('{"items":[1]}', options), {
      batch_id: 'b-1',
      received_count: 1,
      replayed: false,
    });
    assert.deepEqual(await client.submit('{"items":[1]}', options), {
      batch_id: 'b-1',
      received_count: 1,
      replayed: true,
    });
    await service.close();
    assert.deepEqual(
      service.requests.map((r) => r.url),
      Array(2).fill('/products/ingestions?label=feed%20%26%20co%201%2F2'),
    );
  });
});
