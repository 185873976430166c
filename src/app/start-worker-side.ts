import type { Config } from '../config.ts';
import { createItemValidator } from '../validation/item-validator.ts';
import { createBatchProcessor } from '../worker/batch-processor.ts';
import { createBatchWorker, type BatchWorker } from '../worker/batch-worker.ts';
import { startWorkerThread, type WorkerThread } from './worker-thread.ts';
import { startWebhookDispatcher } from '../webhooks/start-dispatcher.ts';
import type { WorkerDeps } from '../worker/worker-deps.ts';

/**
 * Runs of a batch in a row without progress, each counted from its start, that may end in an
 * unexpected error or take their process down before the batch is failed (docs/reference.md §5).
 */
const MAX_BATCH_ATTEMPTS = 5;

/** The worker side of a process: in this thread, or in a thread of its own. */
export interface WorkerSide {
  /** The worker in this thread (ROLE=worker, or ROLE=all without WORKER_THREAD). */
  worker: BatchWorker | null;
  /** The worker in a thread of its own (ROLE=all with WORKER_THREAD, the default on a server). */
  thread: WorkerThread | null;
  /** Tells the idle polling loops that a batch was just submitted in this process. */
  wake(): void;
  /**
   * Hands back or finishes the batches in hand, stops sending webhooks and taking jobs (the queue
   * included). `requestsClosed` settles once this process's requests have ended: the queue they
   * send jobs to stops after it. A worker in its own thread, with its own connections and queue,
   * hands its batches back meanwhile; a worker on this thread shares the requests' queue, and stops
   * after them (docs/reliability.md).
   */
  stop(timeoutMs: number, requestsClosed?: Promise<unknown>): Promise<void>;
}

/** The batch worker of this thread, not started. */
export function createWorker(config: Config, deps: WorkerDeps): BatchWorker {
  const processor = createBatchProcessor({
    db: deps.db,
    validateItem: createItemValidator(),
    chunkSize: config.worker.chunkSize,
    maxAttempts: MAX_BATCH_ATTEMPTS,
  });
  return createBatchWorker({
    ...deps,
    processor,
    concurrency: config.worker.concurrency,
    batchRetentionDays: config.worker.batchRetentionDays,
    historyRetentionDays: config.worker.historyRetentionDays,
  });
}

/**
 * Starts the worker side `config` asks for; resolves once it takes jobs. `drain`, aborted by a
 * signal while the start is under way, reaches a worker thread at once (`startWorkerThread`).
 */
export async function startWorkerSide(
  config: Config,
  deps: WorkerDeps,
  drain?: AbortSignal,
): Promise<WorkerSide> {
  if (config.worker.thread) {
    const thread = await startWorkerThread(config, deps.log, drain);
    deps.metrics.addSource(() => thread.metrics());
    return {
      worker: null,
      thread,
      wake: () => thread.wake(),
      async stop(timeoutMs, requestsClosed) {
        // Settled, not all: requests whose close failed must not cut the thread's hand-back short.
        const [, requests] = await Promise.allSettled([thread.stop(timeoutMs), requestsClosed]);
        await deps.queue.stop(timeoutMs);
        if (requests.status === 'rejected') throw requests.reason;
      },
    };
  }
  const worker = createWorker(config, deps);
  await worker.start();
  // Webhook deliveries go out from where batches end: this thread's worker.
  const webhooks = await startWebhookDispatcher(config, deps).catch(async (error: unknown) => {
    await worker.stop(1_000).catch(() => undefined);
    throw error;
  });
  return {
    worker,
    thread: null,
    wake: () => deps.queue.wake(),
    async stop(timeoutMs, requestsClosed) {
      // Stopping this worker stops the queue: a request still in its grace could not send its job.
      await requestsClosed;
      webhooks.stop();
      await worker.stop(timeoutMs);
    },
  };
}
