/** A worker whose tenant lock is lost stops that tenant at the next chunk and hands it back. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/database.ts';
import { ShutdownError, type BatchProcessor } from '../../src/worker/batch-processor.ts';
import { findBatch } from '../../src/ingestion/batch.repository.ts';
import type { IngestJob, JobQueue } from '../../src/queue/job-queue.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { processorOn, storeBatch, workerOn } from '../helpers/stored-batch.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(() => svc?.stop());

/**
 * A worker on the service's database whose tenant locks report `lockLost()`, and the jobs it
 * sends. `watch` wraps its batch processor; `holdLock: false` takes no real lock.
 */
function workerWithLock(
  lockLost: () => AbortSignal,
  {
    concurrency = 1,
    holdLock = true,
    watch = (processor) => processor,
  }: { concurrency?: number; holdLock?: boolean; watch?: (processor: BatchProcessor) => BatchProcessor } = {},
) {
  const db: Database = {
    ...svc.service.db,
    withLock: (key, waitMs, fn) =>
      holdLock
        ? svc.service.db.withLock(key, waitMs, () => fn(lockLost()))
        : fn(lockLost()).then((value) => ({ value })),
  };
  const sent: IngestJob[] = [];
  const queue: JobQueue = {
    ...svc.service.queue,
    send: (job) => {
      sent.push(job);
      return Promise.resolve();
    },
  };
  const worker = workerOn({ db, queue, processor: watch(processorOn(db, 1)), concurrency });
  return { worker, sent };
}

void test('a lost tenant lock stops the drain at the next chunk, its run given back, as a shutdown does', async () => {
  const tenant = svc.tenant('lock-lost');
  const first = await storeBatch(svc.service.db, tenant, [product(), product(), product(), product()]);
  const second = await storeBatch(svc.service.db, tenant, [product()]);

  // The tenant lock's connection is lost once the first chunk is being written.
  const lockLost = new AbortController();
  const runs: string[] = [];
  const { worker, sent } = workerWithLock(() => lockLost.signal, {
    watch: (processor) => ({
      ...processor,
      processBatch(tenantId, batchId, signal, pipeline) {
        runs.push(batchId);
        return processor.processBatch(tenantId, batchId, signal, {
          ...pipeline,
          onWriting: () => {
            pipeline?.onWriting?.();
            lockLost.abort();
          },
        });
      },
    }),
  });

  // A ShutdownError is how a job hands its tenant back (the job handler re-queues it).
  await assert.rejects(worker.drainTenant(tenant), ShutdownError);
  assert.deepEqual(runs, [first], 'the second batch is not started');
  const stopped = await findBatch(svc.service.db, tenant, first);
  assert.equal(stopped?.status, 'processing');
  assert.equal(stopped?.next_index, 1, 'stopped after its first chunk of one item');
  assert.equal(stopped?.attempts, 0, 'the run was given back: a lost lock is not the batch’s doing');
  assert.equal((await findBatch(svc.service.db, tenant, second))?.status, 'accepted');
  assert.deepEqual(sent, []);

  // The next drain, holding its lock, finishes both in order.
  const { worker: next } = workerWithLock(() => new AbortController().signal);
  await next.drainTenant(tenant);
  assert.equal((await findBatch(svc.service.db, tenant, first))?.status, 'completed');
  assert.equal((await findBatch(svc.service.db, tenant, second))?.status, 'completed');
});

void test('a lock already lost when the drain starts: nothing is processed, the tenant is handed back', async () => {
  const tenant = svc.tenant('lock-lost-early');
  const batchId = await storeBatch(svc.service.db, tenant, [product()]);
  const { worker, sent } = workerWithLock(() => AbortSignal.abort());
  await worker.drainTenant(tenant);
  const batch = await findBatch(svc.service.db, tenant, batchId);
  assert.equal(batch?.status, 'accepted');
  assert.equal(batch?.attempts, 0);
  assert.deepEqual(sent, [{ tenantId: tenant, batchId: null }]);
});

void test('drains that end leave no listener behind on the worker: no leak warning at 64 at once', async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.name);
  process.on('warning', onWarning);
  try {
    // Each lock has its signal, as each lease of a server connection does. No lock is really
    // taken: on a server each would hold one of the test service's few connections, and 64
    // holders waiting for a connection to write with would wait for ever.
    const { worker } = workerWithLock(() => new AbortController().signal, {
      concurrency: 64,
      holdLock: false,
    });
    const tenants = Array.from({ length: 64 }, () => svc.tenant('many-drains'));
    for (const tenant of tenants) await storeBatch(svc.service.db, tenant, [product()]);
    // All at once, as 64 job loops would run them, then again one after the other.
    await Promise.all(tenants.map((tenant) => worker.drainTenant(tenant)));
    for (const tenant of tenants.slice(0, 20)) await worker.drainTenant(tenant);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', onWarning);
  }
});
