import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startService, type Service } from '../../src/app/start-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { embeddedTemplate } from '../helpers/embedded-template.ts';
import { dropServiceSchema } from '../helpers/server-schema.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';
import { storeBatch } from '../helpers/stored-batch.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * A ROLE=worker process serves no API, but listens on PORT/HOST for `/healthz`, `/readyz` and
 * `/metrics`, so a supervisor can probe it and its batch metrics can be scraped.
 */

// The worker's HTTP log (one line per request) would only clutter the test output.
process.env.LOG_LEVEL = 'silent';

const serverUrl = process.env.TEST_DATABASE_URL;

/** A ROLE=worker service listening on `port` (0: a free one) of 127.0.0.1, in `schema` on a server. */
async function startWorker(schema?: string, port = 0): Promise<{ service: Service; baseUrl: string }> {
  const config = loadConfig({
    NODE_ENV: 'test',
    ROLE: 'worker',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: 'http://worker.test',
    ...(serverUrl && schema ? { DATABASE_URL: serverUrl, DATABASE_SCHEMA: schema } : {}),
  });
  const service = await startService(config, {
    listen: true,
    dataDir: null,
    logger: pino({ level: 'silent' }),
    embeddedTemplate: serverUrl ? undefined : await embeddedTemplate(),
  });
  if (!service.app) {
    await service.stop();
    throw new Error('ROLE=worker started without listening');
  }
  const { port: listening } = service.app.server.address() as AddressInfo;
  return { service, baseUrl: `http://127.0.0.1:${listening}` };
}

/** Polls the worker's `/metrics` until `pattern` shows, and returns the text. */
async function metricsShowing(baseUrl: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`/metrics never showed ${pattern}:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

void describe('a ROLE=worker process', () => {
  const schema = serverUrl ? `test_${randomBytes(6).toString('hex')}` : undefined;
  let service: Service;
  let baseUrl: string;
  before(async () => {
    ({ service, baseUrl } = await startWorker(schema));
  });
  after(async () => {
    await service?.stop();
    if (serverUrl && schema) await dropServiceSchema(serverUrl, schema);
  });

  void test('listens on PORT/HOST and answers /healthz and /readyz without auth', async () => {
    assert.ok(service.worker, 'the worker runs in this process');
    const health = await fetch(`${baseUrl}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    assert.equal(health.status, 200);
    assert.equal(health.headers.get('x-request-id'), 'probe-1');
    assert.deepEqual(await health.json(), { status: 'ok' });

    const ready = await fetch(`${baseUrl}/readyz`);
    assert.equal(ready.status, 200);
    assert.match(ready.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(await ready.json(), { status: 'ready', checks: { database: 'ok', queue: 'ok' } });
  });

  void test('serves no API and no documents: anything else is a not-found problem', async () => {
    const cases: Array<[string, string, RequestInit?]> = [
      ['GET', '/no/such/path'],
      [
        'POST',
        '/products/ingestions',
        { body: JSON.stringify({ items: [product()] }), headers: { 'content-type': 'application/json' } },
      ],
      ['GET', '/products/ingestions/0193a4f2-0000-7000-8000-000000000000'],
      ['GET', '/openapi.json'],
      ['GET', '/docs'],
      ['GET', '/problems/not-found'],
    ];
    for (const [method, path, init] of cases) {
      const res = await fetch(`${baseUrl}${path}`, { method, ...init });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.headers.get('content-type'), 'application/problem+json; charset=utf-8');
      assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
      assert.deepEqual(await res.json(), {
        type: 'http://worker.test/problems/not-found',
        title: 'Not found',
        status: 404,
        detail: `No route for ${method} ${path}.`,
        instance: path,
      });
    }
  });

  void test('/metrics shows the batches this worker processed, its pool and Node process figures', async () => {
    const tenant = `ops-${randomBytes(4).toString('hex')}`;
    // This test's own probe, so the count below does not depend on which tests ran before it.
    const healthCount =
      /^http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} (\d+)$/m;
    const probesBefore = Number(healthCount.exec(await (await fetch(`${baseUrl}/metrics`)).text())?.[1] ?? 0);
    assert.equal((await fetch(`${baseUrl}/healthz`)).status, 200);
    // Stored and enqueued as a submission does, on the database this worker shares.
    const batchId = await storeBatch(service.db, tenant, [product(), product(), 'not an object']);
    await service.queue.send({ tenantId: tenant, batchId });

    const text = await metricsShowing(
      baseUrl,
      /^ingestion_batches_total\{status="completed_with_errors"\} 1$/m,
    );
    const res = await fetch(`${baseUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(text, /^ingestion_items_total\{outcome="upserted"\} 2$/m);
    assert.match(text, /^ingestion_items_total\{outcome="failed"\} 1$/m);
    assert.match(text, /^ingestion_batch_duration_seconds_count 1$/m);
    assert.match(text, /^# HELP db_pool_connections /m);
    assert.match(text, /^# HELP process_cpu_user_seconds_total /m);
    assert.equal(Number(healthCount.exec(text)?.[1]), probesBefore + 1);
    if (serverUrl) {
      assert.match(text, /^db_pool_connections\{role="worker",state="idle"\} \d+$/m);
      // The worker read its chunk's stored rows on its reader pool, which keeps the connection idle.
      assert.match(text, /^db_reader_pool_connections\{role="worker",state="idle"\} [1-9]\d*$/m);
    }
  });

  void test('/readyz answers 503 naming the queue once the queue has stopped', async () => {
    await service.worker!.stop(1_000);
    const ready = await fetch(`${baseUrl}/readyz`);
    assert.equal(ready.status, 503);
    assert.deepEqual(await ready.json(), {
      status: 'not_ready',
      checks: { database: 'ok', queue: 'failing' },
    });
  });
});

void describe(
  'a ROLE=worker process beside a ROLE=api process',
  { skip: serverUrl ? false : NEEDS_SERVER },
  () => {
    let api: TestService;
    let worker: { service: Service; baseUrl: string } | undefined;
    before(async () => {
      api = await startTestService({ ROLE: 'api' });
      worker = await startWorker(api.service.config.databaseSchema);
    });
    after(async () => {
      await worker?.service.stop();
      await api?.stop();
    });

    void test("the worker's /metrics counts a batch submitted to the API", async () => {
      const token = await api.token(api.tenant('ops'));
      const batchId = await api.submit(token, [product(), 'not an object', 42]);
      const record = await api.waitForTerminal(token, batchId);
      assert.deepEqual(
        { status: record.status, upserted: record.upserted, failed: record.failed },
        { status: 'completed_with_errors', upserted: 1, failed: 2 },
      );
      const text = await metricsShowing(
        worker!.baseUrl,
        /^ingestion_batches_total\{status="completed_with_errors"\} 1$/m,
      );
      assert.match(text, /^ingestion_items_total\{outcome="upserted"\} 1$/m);
      assert.match(text, /^ingestion_items_total\{outcome="failed"\} 2$/m);
      // The API counted nothing: it runs no worker.
      const apiMetrics = await api.request({ method: 'GET', url: '/metrics' });
      assert.match(apiMetrics.body, /^# HELP ingestion_items_total /m);
      assert.doesNotMatch(apiMetrics.body, /^ingestion_items_total\{/m);
    });
  },
);

/** A port of 127.0.0.1 held by another server until `release` is called. */
async function takenPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  return {
    port: (holder.address() as AddressInfo).port,
    release: () => new Promise((resolve) => holder.close(() => resolve())),
  };
}

void test('a worker whose port is taken fails its start with EADDRINUSE', async () => {
  const schema = serverUrl ? `test_${randomBytes(6).toString('hex')}` : undefined;
  const taken = await takenPort();
  try {
    await assert.rejects(startWorker(schema, taken.port), { code: 'EADDRINUSE' });
  } finally {
    await taken.release();
    if (serverUrl && schema) await dropServiceSchema(serverUrl, schema);
  }
});

void describe(
  'a ROLE=worker process whose port is taken, beside a ROLE=api process',
  { skip: serverUrl ? false : NEEDS_SERVER },
  () => {
    let api: TestService;
    before(async () => {
      api = await startTestService({ ROLE: 'api' });
    });
    after(async () => {
      await api?.stop();
    });

    void test('fails before it takes any batch: a waiting batch stays accepted', async () => {
      const token = await api.token(api.tenant('ops-port'));
      const batchId = await api.submit(token, [product()]);
      const taken = await takenPort();
      try {
        await assert.rejects(startWorker(api.service.config.databaseSchema, taken.port), {
          code: 'EADDRINUSE',
        });
      } finally {
        await taken.release();
      }
      const res = await api.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token });
      const record = res.json<Record<string, unknown>>();
      assert.deepEqual(
        [record.status, record.validated_ok, record.validated_failed, record.upserted, record.failed],
        ['accepted', 0, 0, 0, 0],
      );
    });
  },
);
