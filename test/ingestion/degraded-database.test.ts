import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createCatalogModel } from '../../reliability/catalog-model.ts';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/db/database-unavailable.ts';
import { product, withoutName, errorShapes } from '../helpers/catalog-fixtures.ts';
import { TERMINAL, countersOf, waitTerminal, type StatusRecord } from '../helpers/assertions.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * A database that refuses writes (read-only, as a standby after a failover is): submissions answer
 * 503 problem+json with Retry-After and store nothing, reads keep working, the worker neither
 * crashes nor spins, and once the database takes writes again every batch accepted before the fault
 * ends with exact counters, by itself.
 *
 * Embedded (PGlite, one session): `SET default_transaction_read_only` on the service's own session.
 * Server: a database of this test's own, `ALTER DATABASE … SET default_transaction_read_only`, and
 * the service's connections terminated so that new ones are read-only (and again to recover).
 */

const serverUrl = process.env.TEST_DATABASE_URL;

/** Turns the fault on and off. */
interface Fault {
  readOnly(on: boolean): Promise<void>;
  dispose(): Promise<void>;
}

let svc: TestService;
let fault: Fault;

/** A database of its own on the server, so that ALTER DATABASE touches nothing shared. */
async function serverFault(): Promise<{ url: string; fault: Fault }> {
  const name = `proof_ro_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl!);
  url.pathname = `/${name}`;
  // Waits (up to 5 s each) for the backends to exit: one inside a COMMIT finishes it first, and
  // that commit must land before the test reads what the fault left.
  const terminateOthers = () =>
    admin.query(
      `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
      [name],
    );
  return {
    url: url.toString(),
    fault: {
      async readOnly(on) {
        await admin.query(
          `ALTER DATABASE ${name} ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`,
        );
        await terminateOthers();
      },
      async dispose() {
        await terminateOthers();
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    },
  };
}

before(async () => {
  const env = { WORKER_CHUNK_SIZE: '50' };
  if (serverUrl) {
    const own = await serverFault();
    fault = own.fault;
    svc = await startTestService({ ...env, DATABASE_URL: own.url });
  } else {
    svc = await startTestService(env);
    const { db } = svc.service;
    fault = {
      async readOnly(on) {
        await db.query(`SET default_transaction_read_only = ${on ? 'on' : 'off'}`);
      },
      async dispose() {},
    };
  }
});
after(async () => {
  await svc?.stop();
  await fault?.dispose();
});

const status = async (token: string, batchId: string) =>
  (await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token })).json<StatusRecord>();

/**
 * A batch's status, asked again while it answers 503: on the server the fault ends every connection,
 * and a read sent on a pooled connection before the pool has heard that it is gone fails with 503
 * (a client retries it after Retry-After). The next read, on a new connection, answers.
 */
async function statusOnceReadable(token: string, batchId: string): Promise<StatusRecord> {
  for (const deadline = Date.now() + 10_000; ;) {
    const res = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token });
    if (res.statusCode !== 503 || Date.now() > deadline) {
      assert.equal(res.statusCode, 200, res.body);
      return res.json<StatusRecord>();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

void test('a read-only database: 503 with Retry-After, reads work, and accepted batches finish after it recovers', async (t) => {
  const token = await svc.token(svc.tenant('read-only'));
  const model = createCatalogModel();
  // Five batches of 1000 items (one in seven invalid), so some are still running when the fault comes.
  const batches = Array.from({ length: 5 }, () =>
    Array.from({ length: 1000 }, (_, n) => (n % 7 === 3 ? withoutName() : product())),
  );
  const batchIds: string[] = [];
  for (const items of batches) batchIds.push(await svc.submit(token, items));
  const expected = batches.map((items) => model.applyBatch(items));

  await fault.readOnly(true);
  const atFault = await Promise.all(batchIds.map((id) => statusOnceReadable(token, id)));
  const running = atFault.filter((record) => !TERMINAL.has(record.status)).length;
  assert.ok(running > 0, `every batch ended before the fault: ${JSON.stringify(atFault.map(countersOf))}`);

  // A submission is refused, whole, with a problem the client can act on.
  const refused = await svc.request({
    method: 'POST',
    url: '/products/ingestions',
    token,
    json: { items: [product()] },
  });
  assert.equal(refused.statusCode, 503, refused.body);
  assert.match(String(refused.headers['content-type']), /^application\/problem\+json/);
  assert.equal(refused.headers['retry-after'], String(DATABASE_RETRY_AFTER_SECONDS));
  assert.deepEqual(refused.json(), {
    type: 'http://service.test/problems/internal-error',
    title: 'Internal server error',
    status: 503,
    detail: 'The database cannot take this request now; retry later.',
    instance: '/products/ingestions',
  });

  // Reads keep working: statuses, the batch list, errors pages and the catalog.
  const list = await svc.request({ method: 'GET', url: '/products/ingestions?limit=100', token });
  assert.equal(list.statusCode, 200, list.body);
  assert.deepEqual(
    list
      .json<{ data: Array<{ batch_id: string }> }>()
      .data.map((record) => record.batch_id)
      .sort(),
    [...batchIds].sort(),
    'the refused submission stored no batch',
  );
  const errorsPage = await svc.request({
    method: 'GET',
    url: `/products/ingestions/${batchIds[0]}/errors`,
    token,
  });
  assert.equal(errorsPage.statusCode, 200, errorsPage.body);
  const catalog = await svc.request({ method: 'GET', url: '/products?limit=10', token });
  assert.equal(catalog.statusCode, 200, catalog.body);

  // The worker keeps failing to write for a while: no crash, no progress, nothing half-written.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const during = await Promise.all(batchIds.map((id) => status(token, id)));
  assert.deepEqual(during.map(countersOf), atFault.map(countersOf), 'nothing was written while read-only');
  assert.equal((await svc.request({ method: 'GET', url: '/healthz' })).statusCode, 200);
  // Ready: reads are served, and a supervisor that took the process out would fail those too.
  const ready = await svc.request({ method: 'GET', url: '/readyz' });
  assert.equal(ready.statusCode, 200, ready.body);

  await fault.readOnly(false);
  const recoveredAt = Date.now();
  for (const [n, batchId] of batchIds.entries()) {
    const final = await waitTerminal(svc, token, batchId, 120_000);
    assert.deepEqual(countersOf(final), expected[n]!.counters, `batch ${n}`);
    assert.deepEqual(
      errorShapes(await svc.allErrors(token, batchId)),
      expected[n]!.failures,
      `errors of batch ${n}`,
    );
  }
  const resumedWithinMs = Date.now() - recoveredAt;
  const after = await svc.submit(token, [product()]);
  assert.equal((await waitTerminal(svc, token, after)).status, 'completed');
  t.diagnostic(`${running} batches running at the fault; all terminal ${resumedWithinMs} ms after recovery`);
});
