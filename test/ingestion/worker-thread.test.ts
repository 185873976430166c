import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

/** ROLE=all on a PostgreSQL server: the worker runs in a thread of its own (WORKER_THREAD). */

const skip = process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER;

void describe('the worker in its own thread', { skip }, () => {
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
});
