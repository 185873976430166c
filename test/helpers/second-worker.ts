import { pino } from 'pino';
import { createBatchProcessor } from '../../src/worker/batch-processor.ts';
import { createBatchWorker, type BatchWorker } from '../../src/worker/batch-worker.ts';
import { createItemValidator } from '../../src/validation/item-validator.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { startJobQueue } from '../../src/queue/job-queue.ts';
import type { TestService } from './test-service.ts';

const HOUR_SECONDS = 3600;

/**
 * A second worker on the test service's database and queue, with a pg-boss of its own, as another
 * process would run one. It polls the queue once an hour, so only its sweep (at its start, then
 * every `sweepIntervalMs`) or a wake-up of its own finds work. `stop` stops its queue too.
 */
export async function startSecondWorker(
  svc: TestService,
  options: { sweepIntervalMs?: number; batchRetentionDays?: number; historyRetentionDays?: number } = {},
): Promise<BatchWorker> {
  const { db } = svc.service;
  const queue = await startJobQueue(db, {
    schema: svc.service.queue.schema,
    pollingIntervalSeconds: HOUR_SECONDS,
  });
  const worker = createBatchWorker({
    db,
    queue,
    processor: createBatchProcessor({
      db,
      validateItem: createItemValidator(),
      chunkSize: 1000,
      maxAttempts: 3,
    }),
    metrics: createMetrics({ defaults: false }),
    log: pino({ level: 'silent' }),
    concurrency: 1,
    ...options,
  });
  await worker.start();
  return worker;
}
