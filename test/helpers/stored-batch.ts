import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.ts';
import { insertBatch, insertBatchItems } from '../../src/ingestion/batches/batch.repository.ts';
import { createBatchProcessor, type BatchProcessor } from '../../src/worker/batch-processor.ts';
import { createItemValidator } from '../../src/validation/item-validator.ts';
import { createBatchWorker, tenantLockKey, type BatchWorker } from '../../src/worker/batch-worker.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import type { JobQueue } from '../../src/queue/job-queue.ts';
import { pino } from 'pino';
import { testServiceForFile } from './test-service.ts';

/** Batches stored directly and a batch processor the test runs itself: the worker below its queue. */

/** Stores a batch the way a submission does, but enqueues no job: the test drives it. */
export async function storeBatch(db: Database, tenantId: string, items: unknown[]): Promise<string> {
  const batchId = randomUUID();
  await db.transaction(async (tx) => {
    await insertBatch(tx, { tenantId, batchId, receivedCount: items.length });
    await insertBatchItems(tx, { tenantId, batchId, body: JSON.stringify({ items }) });
  });
  return batchId;
}

/**
 * Runs `work` holding the tenant's drain lock, as the service's worker holds it, waiting up to 10 s
 * for it. A test that submitted a batch of the tenant through the API and then stores batches of
 * it directly needs this: the worker, ending that drain, looks once more for the tenant's
 * unfinished batches (batch-worker.ts, drainTenant) and would run one stored meanwhile, beside or
 * instead of the test's own processor. Finding the lock held, it leaves them alone.
 */
export async function holdingTenant<T>(db: Database, tenantId: string, work: () => Promise<T>): Promise<T> {
  const held = await db.withLock(tenantLockKey(tenantId), 10_000, work);
  if (!held) throw new Error(`the service's worker kept tenant ${tenantId} for 10 s`);
  return held.value;
}

/** A batch processor on `db` with the real validator. */
export const processorOn = (db: Database, chunkSize: number, maxAttempts = 3): BatchProcessor =>
  createBatchProcessor({ db, validateItem: createItemValidator(), chunkSize, maxAttempts });

/** Whether the batch's body is still stored (it is dropped when the batch ends). */
export async function bodyStored(db: Database, tenantId: string, batchId: string): Promise<boolean> {
  const rows = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM batch_payloads WHERE tenant_id = $1 AND batch_id = $2',
    [tenantId, batchId],
  );
  return rows[0]!.n === 1;
}

/** A batch worker around `processor`, silent and with metrics of its own, whose drains a test runs. */
export const workerOn = (deps: {
  db: Database;
  queue: JobQueue;
  processor: BatchProcessor;
  concurrency?: number;
}): BatchWorker =>
  createBatchWorker({
    ...deps,
    metrics: createMetrics({ defaults: false }),
    log: pino({ level: 'silent' }),
    concurrency: deps.concurrency ?? 1,
  });

/**
 * The setup of a file whose tests drive the batch processor themselves: one test service for the
 * file (small chunks, so a batch passes through many observable steps), and batches stored in it.
 */
export function storedBatchService(env: Record<string, string> = { WORKER_CHUNK_SIZE: '50' }) {
  const svc = testServiceForFile(env);
  return {
    svc,
    storeBatch: (tenantId: string, items: unknown[]) => storeBatch(svc.service.db, tenantId, items),
    bodyStored: (tenantId: string, batchId: string) => bodyStored(svc.service.db, tenantId, batchId),
  };
}
