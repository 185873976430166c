import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/database.ts';
import { ShutdownError, type BatchProcessor } from '../../src/worker/batch-processor.ts';
import { LOST_LOCK_RETRY_SECONDS } from '../../src/worker/batch-worker.ts';
import { findBatch } from '../../src/ingestion/batches/batch.repository.ts';
import type { IngestJob, JobQueue } from '../../src/queue/job-queue.ts';
import { product, withoutName } from '../helpers/catalog-fixtures.ts';
import { processorOn, storeBatch, workerOn } from '../helpers/stored-batch.ts';
import { testServiceForFile } from '../helpers/test-service.ts';
import {
  allProducts,
  assertCounters,
  assertRecordInvariants,
  batchStatus,
  TERMINAL,
  waitTerminal,
  type StatusRecord,
} from '../helpers/assertions.ts';
import { NEEDS_SERVER, startSharedServices } from '../helpers/state-shared-schema.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';

/**
 * How the worker drains a tenant (src/worker/batch-worker.ts): under the tenant's lock, one batch
 * at a time and in order, while other tenants proceed in parallel; a drain whose lock is lost stops
 * at the next chunk and hands the tenant back, in this process or in several on one PostgreSQL.
 */

// Small chunks, so that a backlog of big batches is seconds of work.
const svc = testServiceForFile({ WORKER_CHUNK_SIZE: '50' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  const sent: SentJob[] = [];
  // The job loop runs the jobs of `jobs` once each; nothing else of the service's queue is touched.
  const jobs: IngestJob[] = [];
  const queue: JobQueue = {
    ...svc.service.queue,
    send: (job, options = {}) => {
      sent.push({ job, startAfterSeconds: options.startAfterSeconds ?? 0 });
      return Promise.resolve();
    },
    work: async (_concurrency, handler) => {
      for (const job of jobs) await handler(job);
    },
    stop: () => Promise.resolve(),
  };
  const worker = workerOn({ db, queue, processor: watch(processorOn(db, 1)), concurrency });
  return { worker, sent, jobs };
}

/** A `watch` for {@link workerWithLock}: runs `action` each time a chunk's rows are on their way. */
const whenWriting =
  (action: () => void) =>
  (processor: BatchProcessor): BatchProcessor => ({
    ...processor,
    processBatch(tenantId, batchId, signal, pipeline) {
      return processor.processBatch(tenantId, batchId, signal, {
        ...pipeline,
        onWriting: () => {
          pipeline?.onWriting?.();
          action();
        },
      });
    },
  });

/** A job a worker sent, with its delay. */
interface SentJob {
  job: IngestJob;
  startAfterSeconds: number;
}

void describe('a drain whose tenant lock is lost', () => {
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
    // Not at once: the server may not have dropped the dead session's lock yet.
    assert.deepEqual(sent, [
      { job: { tenantId: tenant, batchId: null }, startAfterSeconds: LOST_LOCK_RETRY_SECONDS },
    ]);
  });

  void test('the job after a lock lost mid-batch waits for the lock to be dropped; one after a shutdown does not', async () => {
    // The job loop re-queues the tenant of a drain that stopped mid-batch. A job run at once could
    // find the dead session's lock still held, end, and leave the tenant to the stale sweep.
    const tenant = svc.tenant('lock-lost-job');
    const batchId = await storeBatch(svc.service.db, tenant, [product(), product(), product()]);
    const lockLost = new AbortController();
    const losing = workerWithLock(() => lockLost.signal, { watch: whenWriting(() => lockLost.abort()) });
    losing.jobs.push({ tenantId: tenant, batchId });
    await losing.worker.start();
    await losing.worker.stop(5_000);
    assert.equal((await findBatch(svc.service.db, tenant, batchId))?.next_index, 1, 'stopped after a chunk');
    // The first job sent is the loop's; the housekeeping's first sweep, which starts after the job
    // loop, sends one of its own for every tenant with an unfinished batch.
    assert.deepEqual(losing.sent[0], {
      job: { tenantId: tenant, batchId: null },
      startAfterSeconds: LOST_LOCK_RETRY_SECONDS,
    });

    // A worker stopping hands the tenant back at once: nothing of its own is lost.
    const stopping = workerWithLock(() => new AbortController().signal, {
      watch: whenWriting(() => void stopping.worker.stop(5_000)),
    });
    stopping.jobs.push({ tenantId: tenant, batchId });
    await stopping.worker.start();
    await stopping.worker.stop(5_000);
    assert.equal((await findBatch(svc.service.db, tenant, batchId))?.next_index, 2, 'stopped after a chunk');
    assert.deepEqual(stopping.sent[0], { job: { tenantId: tenant, batchId: null }, startAfterSeconds: 0 });
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
});

void describe('tenants side by side', () => {
  void test('tenants proceed in parallel: a small batch is not queued behind another tenant’s backlog', async () => {
    const busy = await svc.token(svc.tenant('busy'));
    const quick = await svc.token(svc.tenant('quick'));
    // Ten batches of 500 in 50-item chunks: seconds of work for the busy tenant, and ten jobs queued
    // ahead of the quick tenant's one.
    const backlog: string[] = [];
    for (let i = 0; i < 10; i++) {
      backlog.push(
        await svc.submit(
          busy,
          Array.from({ length: 500 }, () => product()),
        ),
      );
    }
    const quickFinal = await waitTerminal(svc, quick, await svc.submit(quick, [product()]));
    const busyLast = await batchStatus(svc, busy, backlog.at(-1)!);
    assertCounters(quickFinal, 'completed', [1, 1, 0, 1, 0]);
    assert.ok(
      !TERMINAL.has(busyLast.status),
      `the other tenant's backlog finished first: ${busyLast.status}`,
    );
    for (const id of backlog) {
      const final = await waitTerminal(svc, busy, id, 60_000);
      assertCounters(final, 'completed', [500, 500, 0, 500, 0]);
    }
  });
});

void describe('several worker processes on one PostgreSQL', () => {
  void test(
    'two workers never process one tenant at once: 10 batches apply in order with exact counters',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      const shared = await startSharedServices([
        { ROLE: 'api' },
        { ROLE: 'worker', WORKER_CHUNK_SIZE: '10' },
        { ROLE: 'worker', WORKER_CHUNK_SIZE: '10' },
      ]);
      try {
        const api = shared.services[0]!;
        const token = await shared.token(shared.tenant('two-workers'));
        const products = Array.from({ length: 60 }, (_, i) =>
          product({ external_id: `p-${String(i).padStart(2, '0')}` }),
        );
        const ids: string[] = [];
        for (let k = 1; k <= 10; k++) {
          const items = products.map((p) => ({
            ...p,
            name: `batch ${k}`,
            variants: [{ ...(p.variants as Array<Record<string, unknown>>)[0], price: k }],
          }));
          ids.push(await api.submit(token, items));
        }
        // Watch the tenant's batches: never two of them validating or processing at the same moment.
        const deadline = Date.now() + 90_000;
        let finals: StatusRecord[] = [];
        for (;;) {
          const res = await api.request({ method: 'GET', url: '/products/ingestions?limit=100', token });
          assert.equal(res.statusCode, 200, res.body);
          const batches = res.json<{ data: StatusRecord[] }>().data;
          const running = batches.filter((b) => b.status === 'validating' || b.status === 'processing');
          assert.ok(running.length <= 1, `two batches of one tenant running: ${JSON.stringify(running)}`);
          if (batches.length === 10 && batches.every((b) => TERMINAL.has(b.status))) {
            finals = [...batches].reverse();
            break;
          }
          assert.ok(Date.now() < deadline, 'batches not finished within 90 s');
          await sleep(20);
        }
        assert.deepEqual(
          finals.map((b) => b.batch_id),
          ids,
        );
        for (const final of finals) {
          assertCounters(final, 'completed', [60, 60, 0, 60, 0]);
        }
        for (let k = 1; k < finals.length; k++) {
          assert.ok(
            finals[k - 1]!.updated_at < finals[k]!.updated_at,
            'batches finished out of submission order',
          );
        }
        const stored = await allProducts(api, token, 500);
        assert.equal(stored.length, 60);
        for (const p of stored) {
          assert.equal(p.name, 'batch 10');
          assert.equal((p.variants as Array<Record<string, unknown>>)[0]!.price, 10);
        }
      } finally {
        await shared.stop();
      }
    },
  );
  void test(
    'a worker whose tenant lock is lost mid-batch hands the tenant back: nothing crashes, the batch ends exact',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      // What a PostgreSQL restart or a terminated backend does to a worker: the session holding its
      // tenant lock ends, and the server drops the lock. An unheard error on that connection used
      // to end the worker's process.
      const shared = await startSharedServices([
        { ROLE: 'api' },
        { ROLE: 'worker', WORKER_CHUNK_SIZE: '10' },
      ]);
      const admin = await openServerDatabase(process.env.TEST_DATABASE_URL!, { max: 1 });
      try {
        const api = shared.services[0]!;
        const tenant = shared.tenant('lock-lost');
        const token = await shared.token(tenant);
        const items = Array.from({ length: 1000 }, (_, i) => (i % 100 === 7 ? withoutName() : product()));
        const batchId = await api.submit(token, items);
        const deadline = Date.now() + 30_000;
        let holders: Array<{ pid: number }> = [];
        for (;;) {
          const status = await batchStatus(api, token, batchId);
          if (status.status === 'processing') {
            holders = await admin.query<{ pid: number }>(
              `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
                 AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
              [`${shared.schema}:tenant:${tenant}`],
            );
            if (holders.length === 1) break;
          }
          assert.ok(!TERMINAL.has(status.status), 'the batch ended before its lock could be taken away');
          assert.ok(Date.now() < deadline, 'the batch never reached processing');
          await sleep(10);
        }
        await admin.query('SELECT pg_terminate_backend($1)', [holders[0]!.pid]);
        const final = await waitTerminal(api, token, batchId);
        assertRecordInvariants(final, 1000);
        assertCounters(final, 'completed_with_errors', [1000, 990, 10, 990, 10]);
        assert.equal((await api.allErrors(token, batchId)).length, 10);
        assert.equal((await allProducts(api, token, 500)).length, 990);
      } finally {
        await admin.close();
        await shared.stop();
      }
    },
  );
});
