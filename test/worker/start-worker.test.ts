import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { startWorkerThread } from '../../src/app/worker-thread.ts';
import { dropServiceSchema } from '../helpers/server-schema.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

/**
 * The worker side of a process (src/app/start-worker-side.ts): on the API thread, or in a thread of
 * its own (ROLE=all on a PostgreSQL server, WORKER_THREAD). Either way a submission wakes its own
 * process's idle workers, so the batch starts now rather than at their next poll: with the poll an
 * hour away (no setting allows that), only that wake can get a batch processed.
 */

const pollHourly = (config: Config): Config => ({
  ...config,
  worker: { ...config.worker, pollMs: 3_600_000 },
});

async function submitAndFinish(svc: TestService): Promise<void> {
  const tenant = svc.tenant('wake');
  const token = await svc.token(tenant);
  for (let round = 0; round < 2; round++) {
    const batchId = await svc.submit(token, [product(), product()]);
    const record = await svc.waitForTerminal(token, batchId, 15_000);
    assert.deepEqual(
      { status: record.status, upserted: record.upserted, failed: record.failed },
      { status: 'completed', upserted: 2, failed: 0 },
    );
  }
}

const sides = [
  { thread: false, name: 'the worker on the API thread', woken: 'its queue is woken', skip: false },
  {
    thread: true,
    name: 'the worker in its own thread',
    woken: 'a message from the API thread',
    skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER,
  },
] as const;

for (const side of sides) {
  void describe(side.name, { skip: side.skip }, () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ WORKER_THREAD: String(side.thread) }, pollHourly);
    });
    after(async () => {
      await svc?.stop();
    });

    void test(`is woken by each submission (${side.woken})`, async () => {
      assert.notEqual(side.thread ? svc.service.workerThread : svc.service.worker, null);
      await submitAndFinish(svc);
    });
  });
}

void describe(
  'the worker thread, polling as configured',
  { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
  () => {
    let svc: TestService;
    before(async () => {
      // The service's own number of kept connections, which the pool figures below show.
      svc = await startTestService({ WORKER_THREAD: 'true' }, undefined, { keptConnections: null });
    });
    after(async () => {
      await svc?.stop();
    });

    void test('processes batches submitted to the API thread, and /metrics counts them', async () => {
      assert.equal(svc.service.worker, null);
      assert.notEqual(svc.service.workerThread, null);
      const tenant = svc.tenant('thread');
      const token = await svc.token(tenant);
      const batchId = await svc.submit(token, [product(), product(), 'not an object']);
      const record = await svc.waitForTerminal(token, batchId);
      assert.deepEqual(
        { status: record.status, upserted: record.upserted, failed: record.failed },
        { status: 'completed_with_errors', upserted: 2, failed: 1 },
      );

      const metrics = await svc.request({ method: 'GET', url: '/metrics' });
      assert.equal(metrics.statusCode, 200);
      // Counted in the worker thread's registry, shown through the API thread's.
      assert.match(metrics.body, /^ingestion_items_total\{outcome="upserted"\} 2$/m);
      assert.match(metrics.body, /^ingestion_items_total\{outcome="failed"\} 1$/m);
      assert.match(metrics.body, /^ingestion_batches_total\{status="completed_with_errors"\} 1$/m);
      assert.match(
        metrics.body,
        /^http_request_duration_seconds_count\{method="POST",route="\/products\/ingestions",status="202"\} 1$/m,
      );
      // Each thread's pool apart: the API thread's twelve, opened at start and kept, and the
      // worker thread's, opened as it needed them.
      const pool = (role: string, state: string) =>
        Number(
          new RegExp(`^db_pool_connections\\{role="${role}",state="${state}"\\} (\\d+)$`, 'm').exec(
            metrics.body,
          )?.[1],
        );
      assert.equal(pool('all', 'idle') + pool('all', 'busy'), 12, metrics.body);
      assert.ok(pool('worker', 'idle') + pool('worker', 'busy') >= 1, metrics.body);
    });
  },
);

void describe(
  'a drain asked for while the worker thread starts',
  { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
  () => {
    const serverUrl = process.env.TEST_DATABASE_URL!;
    const schema = `test_${randomBytes(6).toString('hex')}`;
    after(async () => {
      await dropServiceSchema(serverUrl, schema);
    });
    /** A service's configuration on `databaseUrl`, in this describe's schema. */
    const configOn = (databaseUrl: string) =>
      loadConfig({
        NODE_ENV: 'test',
        AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
      });

    void test('reaches a thread still loading its modules: it ends at once, having opened nothing', async () => {
      const config = configOn(serverUrl);
      const errors: string[] = [];
      const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
      const drain = new AbortController();
      const starting = startWorkerThread(config, log, drain.signal);
      // The thread is spawned by now, its modules not yet loaded (that takes a second or more).
      drain.abort();
      const thread = await starting;
      await thread.stop(1_000);
      // An ended thread's metrics are its last ones (none here), given in the same turn: a scrape
      // during the rest of a drain does not wait out the second a running thread gets to answer.
      const waited = new Promise((resolve) => setImmediate(() => resolve('waited')));
      assert.equal(await Promise.race([thread.metrics(), waited]), null);
      // A thread that had started its service would have created the schema and its job queue's
      // (migrations run first); a thread that failed or was restarted would have logged an error.
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        const { rows } = await client.query<{ nspname: string }>(
          'SELECT nspname FROM pg_namespace WHERE nspname IN ($1, $2)',
          [schema, `${schema}_jobs`],
        );
        assert.deepEqual(rows, []);
      } finally {
        await client.end();
      }
      assert.deepEqual(errors, []);
    });

    void test('reaches a thread whose start then fails: the start resolves, and the log says why at warn', async () => {
      // A stand-in database server: the thread's first connection proves its service is starting;
      // the drain is asked for then, and the connection is dropped, failing the start.
      const stand = net.createServer();
      const connected = new Promise<net.Socket>((resolve) => {
        stand.once('connection', resolve);
      });
      stand.listen(0, '127.0.0.1');
      await once(stand, 'listening');
      const { port } = stand.address() as net.AddressInfo;
      const config = configOn(`postgres://postgres@127.0.0.1:${port}/test`);
      const lines: Array<{ level: number; msg: string; reason?: string }> = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const drain = new AbortController();
      try {
        const starting = startWorkerThread(config, log, drain.signal);
        const socket = await connected;
        drain.abort();
        socket.destroy();
        const thread = await starting; // a rejection here would make main.ts exit 1 on a SIGTERM
        await thread.stop(1_000);
      } finally {
        stand.close();
      }
      assert.deepEqual(
        lines.map(({ level, msg }) => ({ level, msg })),
        [{ level: 40, msg: 'the worker thread failed while a drain stopped it' }],
      );
      // The stand-in's close reaches the driver as an end of stream, or as a reset when the startup
      // message it never read was still in its buffer.
      assert.match(lines[0]!.reason ?? '', /^(Connection terminated unexpectedly|read ECONNRESET)$/);
    });
  },
);
