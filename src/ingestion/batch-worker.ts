import { setMaxListeners } from 'node:events';
import type { Database } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { BatchProcessor, PipelineOptions, PreparedBatch } from './batch-processor.ts';
import { ShutdownError } from './batch-processor.ts';
import { findOldestUnfinishedBatches, findTenantsWithStaleBatches } from './batch-progress.repository.ts';
import { deleteExpiredBatches } from './batch-retention.ts';
import { pruneRateLimitWindows } from './rate-limiter.ts';

/** Longest a job keeps draining one tenant before handing the rest to a new job (fairness, expiry). */
export const DRAIN_BUDGET_MS = 20_000;
/** An unfinished batch untouched this long has lost its worker (chunks touch it far more often). */
export const STALE_AFTER_SECONDS = 60;
const SWEEP_INTERVAL_MS = 30_000;

/** A minimal logger (pino-compatible). */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The worker role: takes jobs off the queue and drains tenants' batches in submission order. */
export interface BatchWorker {
  start(): Promise<void>;
  /** Stops taking jobs, interrupts running batches at their next chunk and waits for them. */
  stop(timeoutMs: number): Promise<void>;
  /** Processes every unfinished batch of `tenantId`, oldest first (what a job does). */
  drainTenant(tenantId: string): Promise<void>;
}

/**
 * Batches of one tenant must apply in submission order, and two workers must never write one
 * tenant's catalog at once (sku ownership is decided from what is stored). So a job does not
 * process "its" batch: it takes the tenant's lock and drains the tenant's unfinished batches oldest
 * first. A job that finds the lock taken simply ends: the holder re-checks for new batches after it
 * releases the lock, and any batch whose job gave up was committed before that re-check.
 */
export function createBatchWorker(deps: {
  db: Database;
  queue: JobQueue;
  processor: BatchProcessor;
  metrics: Metrics;
  log: Logger;
  concurrency: number;
  drainBudgetMs?: number;
  /** How often to look for batches that lost their worker (tests shorten it). */
  sweepIntervalMs?: number;
  /** Days an ended batch is kept; 0 or absent keeps it for ever. */
  batchRetentionDays?: number;
}): BatchWorker {
  const { db, queue, processor, metrics, log } = deps;
  const budget = deps.drainBudgetMs ?? DRAIN_BUDGET_MS;
  const sweepIntervalMs = deps.sweepIntervalMs ?? SWEEP_INTERVAL_MS;
  const shutdown = new AbortController();
  // Each running drain listens to it (one per job at once, up to 64): not a leak past Node's 10.
  setMaxListeners(deps.concurrency + 10, shutdown.signal);
  const prepareAhead = db.kind === 'server';
  let sweeper: NodeJS.Timeout | undefined;

  async function processOne(
    tenantId: string,
    batchId: string,
    pipeline: PipelineOptions,
    stop: AbortSignal,
  ): Promise<boolean> {
    const started = process.hrtime.bigint();
    try {
      const outcome = await processor.processBatch(tenantId, batchId, stop, pipeline);
      metrics.itemsSettled.inc({ outcome: 'upserted' }, outcome.upserted);
      metrics.itemsSettled.inc({ outcome: 'failed' }, outcome.failed);
      if (outcome.status) {
        metrics.batchesFinished.inc({ status: outcome.status });
        metrics.batchSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
      }
      return outcome.status !== null;
    } catch (error) {
      if (error instanceof ShutdownError) throw error;
      log.error({ err: error, tenantId, batchId }, 'batch processing failed; it will be retried');
      await processor.settleFailedRun(tenantId, batchId);
      throw error;
    }
  }

  /** Prepares a batch ahead of its turn; a failure only means it is prepared again in its turn. */
  async function prepareQuietly(tenantId: string, batchId: string): Promise<PreparedBatch | null> {
    try {
      return await processor.prepareBatch(tenantId, batchId);
    } catch (error) {
      log.warn({ err: error, tenantId, batchId }, 'preparing a batch ahead of its turn failed');
      return null;
    }
  }

  /**
   * Drains a tenant whose lock is held, oldest batch first. On a server the next batch is read,
   * parsed, validated and merged while the current one's rows are being written; the embedded
   * database runs on this thread, so there is nothing to overlap with there.
   */
  async function drainLocked(tenantId: string, lockLost: AbortSignal): Promise<'drained' | 'handed-off'> {
    const deadline = Date.now() + budget;
    // A lost lock stops the drain as a shutdown does, at the next chunk: another process may hold
    // the tenant now, and two drains of one tenant would break its batches' order.
    // Not AbortSignal.any: on Node 20 the process-long shutdown signal would keep every drain's
    // combined signal for ever (nodejs/node#55351); these listeners are removed when the drain ends.
    const stopper = new AbortController();
    const stopNow = () => stopper.abort();
    const onLockLost = () => {
      log.warn({ tenantId }, 'lost the tenant lock: handing it back');
      stopNow();
    };
    if (shutdown.signal.aborted) stopNow();
    if (lockLost.aborted) onLockLost();
    shutdown.signal.addEventListener('abort', stopNow, { once: true });
    lockLost.addEventListener('abort', onLockLost, { once: true });
    const stop = stopper.signal;
    const stopping = () => Date.now() >= deadline || stop.aborted;
    let ahead = null as { batchId: string; prepared: Promise<PreparedBatch | null> } | null;
    try {
      for (;;) {
        const [batchId, nextId] = await findOldestUnfinishedBatches(db, tenantId, 2);
        if (!batchId) return 'drained';
        if (stopping()) return 'handed-off';
        let prepared: PreparedBatch | null = null;
        if (ahead) {
          const ready = await ahead.prepared;
          // A preparation of another batch (one with an earlier place committed late) is dropped.
          if (ahead.batchId === batchId) prepared = ready;
          ahead = null;
        }
        const pipeline: PipelineOptions = {
          prepared,
          onWriting: () => {
            if (nextId && prepareAhead && !ahead && !stopping()) {
              ahead = { batchId: nextId, prepared: prepareQuietly(tenantId, nextId) };
            }
          },
        };
        if (!(await processOne(tenantId, batchId, pipeline, stop))) return 'handed-off';
      }
    } finally {
      shutdown.signal.removeEventListener('abort', stopNow);
      lockLost.removeEventListener('abort', onLockLost);
      // Nothing outlives the lock: a preparation still reading finishes before it is released.
      await ahead?.prepared;
    }
  }

  async function drainTenant(tenantId: string): Promise<void> {
    for (;;) {
      const held = await db.withLock(`tenant:${tenantId}`, 0, (lockLost) => drainLocked(tenantId, lockLost));
      if (held === null) return;
      if (held.value === 'handed-off') {
        // Out of budget, or stopping: another job (here or in another process) takes it from here.
        await queue.send({ tenantId, batchId: null });
        return;
      }
      // Drained: a batch committed while the lock was held may have had its job give up; look again.
      if ((await findOldestUnfinishedBatches(db, tenantId, 1)).length === 0) return;
    }
  }

  /**
   * Enqueues a drain for tenants whose unfinished batches nobody has touched for a while, and wakes
   * this process's idle loops for them rather than leave them to the next poll. Then deletes
   * rate-limit windows past use.
   */
  async function sweep(staleSeconds: number): Promise<void> {
    const stale = await findTenantsWithStaleBatches(db, staleSeconds);
    for (const tenantId of stale) await queue.send({ tenantId, batchId: null });
    if (stale.length > 0) queue.nudge();
    await pruneRateLimitWindows(db);
  }

  let expiring: Promise<void> | null = null;
  /**
   * Deletes ended batches past their retention, beside the sweep rather than in it: a first run over
   * years of batches neither holds up the worker's start nor, should it fail, stops it. One run at a
   * time in this process; other processes' runs skip the batches this one is deleting.
   */
  function expireBatches(): void {
    const days = deps.batchRetentionDays ?? 0;
    if (days === 0 || expiring !== null) return;
    expiring = deleteExpiredBatches(db, days, shutdown.signal)
      .then((deleted) => {
        if (deleted > 0) log.info({ deleted, retentionDays: days }, 'deleted batches past their retention');
      })
      .catch((error: unknown) => log.warn({ err: error }, 'deleting batches past their retention failed'))
      .finally(() => {
        expiring = null;
      });
  }

  return {
    drainTenant,
    async start() {
      await queue.work(deps.concurrency, async (job) => {
        try {
          if (shutdown.signal.aborted) throw new ShutdownError();
          await drainTenant(job.tenantId);
        } catch (error) {
          if (!(error instanceof ShutdownError)) throw error;
          // Hand the tenant back: its batch stays where its last chunk left it, and any worker
          // (this one after a restart) picks the new job up and resumes it.
          await queue.send({ tenantId: job.tenantId, batchId: null });
        }
      });
      // Batches interrupted by a stop or a crash resume at once rather than after the stale delay.
      await sweep(0);
      expireBatches();
      sweeper = setInterval(() => {
        sweep(STALE_AFTER_SECONDS).catch((error: unknown) => log.warn({ err: error }, 'sweep failed'));
        expireBatches();
      }, sweepIntervalMs);
      sweeper.unref();
    },
    async stop(timeoutMs) {
      clearInterval(sweeper);
      shutdown.abort();
      // A deletion under way stops after its statement (each commits alone), within the same time
      // as the queue; one still waiting then (on a table lock) fails harmlessly as the pool closes.
      await Promise.all([
        expiring &&
          Promise.race([expiring, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]),
        queue.stop(timeoutMs),
      ]);
    },
  };
}
