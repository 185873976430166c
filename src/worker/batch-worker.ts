import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { databaseUnavailableReason } from '../db/database-unavailable.ts';
import {
  ShutdownError,
  type BatchProcessor,
  type PipelineOptions,
  type PreparedBatch,
} from './batch-processor.ts';
import { findOldestUnfinishedBatches } from '../ingestion/batches/batch-progress.repository.ts';
import { createHousekeeping } from './housekeeping.ts';
import type { WorkerDeps } from './worker-deps.ts';

/** Longest a job keeps draining one tenant before handing the rest to a new job (fairness, expiry). */
export const DRAIN_BUDGET_MS = 20_000;
/** Longest wait between a job's own tries while the database refuses work (1 + 2 + … + 16 s < the job's expiry). */
const OUTAGE_RETRY_MAX_MS = 16_000;

/**
 * How long the job that takes a tenant over from a drain whose lock was lost waits before it runs.
 * The server tells the lock's holder of a lost session a moment before it drops the session's locks
 * (a backend sends its FATAL, then exits): a job run at once may still find the lock held, end as
 * it does when another drain holds it, and leave the tenant to the stale sweep a minute later.
 */
export const LOST_LOCK_RETRY_SECONDS = 1;

/** The lock a drain of `tenantId` holds (`Database.withLock`): one tenant's batches run one at a time. */
export const tenantLockKey = (tenantId: string) => `tenant:${tenantId}`;

/** The worker role: takes jobs off the queue and drains tenants' batches in submission order. */
export interface BatchWorker {
  /** Takes jobs off the queue, `concurrency` at once, and starts the housekeeping. */
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
 * releases the lock, and any batch whose job gave up was committed before that re-check. A holder
 * whose session died re-checks nothing; the job that takes over from it runs once the server has
 * dropped the dead session's lock ({@link LOST_LOCK_RETRY_SECONDS}).
 *
 * Longer than 120 lines on purpose: a factory of short named steps (processOne, drainLocked,
 * drainTenant, drainThroughOutage, each under 50 lines) that share the worker's shutdown signal and
 * outage state; as modules of their own they would pass that state to each other on every call.
 */
export function createBatchWorker(
  deps: WorkerDeps & {
    processor: BatchProcessor;
    concurrency: number;
    drainBudgetMs?: number;
    /** How often to look for batches that lost their worker (tests shorten it). */
    sweepIntervalMs?: number;
    /** Days an ended batch is kept; 0 or absent keeps it for ever. */
    batchRetentionDays?: number;
    /** Days a product's history entry is kept; 0 or absent keeps it for ever. */
    historyRetentionDays?: number;
  },
): BatchWorker {
  const { db, queue, processor, metrics, log } = deps;
  const budget = deps.drainBudgetMs ?? DRAIN_BUDGET_MS;
  const shutdown = new AbortController();
  // Each running drain listens to it (one per job at once, up to 64): not a leak past Node's 10.
  setMaxListeners(deps.concurrency + 10, shutdown.signal);
  const housekeeping = createHousekeeping({
    db,
    queue,
    log,
    intervalMs: deps.sweepIntervalMs,
    batchRetentionDays: deps.batchRetentionDays,
    historyRetentionDays: deps.historyRetentionDays,
  });

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
      // A database that refuses work fails every batch alike: the outage is logged once, below.
      if (error instanceof ShutdownError || databaseUnavailableReason(error) !== null) throw error;
      log.error({ err: error, tenantId, batchId }, 'batch processing failed; it will be retried');
      await processor.settleFailedRun(tenantId, batchId);
      throw error;
    }
  }

  /**
   * Prepares the batch after `current` ahead of its turn: `nextId` when the drain knew of it, else
   * the tenant's next unfinished batch now. A burst's second batch is often submitted while the
   * first is being read, after the drain looked; without the look now it would wait for its turn
   * unprepared. A failure only means the batch is prepared in its turn.
   */
  async function prepareNextQuietly(
    tenantId: string,
    current: string,
    nextId: string | undefined,
  ): Promise<PreparedBatch | null> {
    let batchId = nextId;
    try {
      batchId ??= (await findOldestUnfinishedBatches(db, tenantId, 2)).find((id) => id !== current);
      return batchId ? await processor.prepareBatch(tenantId, batchId) : null;
    } catch (error) {
      log.warn({ err: error, tenantId, batchId }, 'preparing a batch ahead of its turn failed');
      return null;
    }
  }

  /**
   * Drains a tenant whose lock is held, oldest batch first. The next batch is read, parsed,
   * validated and merged once the current one's rows are on their way: on a server that overlaps
   * the two; the embedded database runs its statements on this thread, so there the preparation
   * waits for the write to commit and runs after it, doing the same work in the same order.
   */
  async function drainLocked(
    tenantId: string,
    lockLost: AbortSignal,
  ): Promise<'drained' | 'handed-off' | 'lock-lost'> {
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
    // Set by onWriting: typed by assertion, as TypeScript would narrow a plain `= null` for good.
    let ahead = null as Promise<PreparedBatch | null> | null;
    try {
      for (;;) {
        const [batchId, nextId] = await findOldestUnfinishedBatches(db, tenantId, 2);
        if (!batchId) return 'drained';
        if (stopping()) return lockLost.aborted && !shutdown.signal.aborted ? 'lock-lost' : 'handed-off';
        let prepared: PreparedBatch | null = null;
        if (ahead) {
          const ready = await ahead;
          // A preparation of another batch (one with an earlier place committed late) is dropped.
          if (ready?.batchId === batchId) prepared = ready;
          ahead = null;
        }
        const pipeline: PipelineOptions = {
          prepared,
          onWriting: () => {
            if (!ahead && !stopping()) ahead = prepareNextQuietly(tenantId, batchId, nextId);
          },
        };
        if (!(await processOne(tenantId, batchId, pipeline, stop))) return 'handed-off';
      }
    } finally {
      shutdown.signal.removeEventListener('abort', stopNow);
      lockLost.removeEventListener('abort', onLockLost);
      // Nothing outlives the lock: a preparation still reading finishes before it is released.
      await ahead;
    }
  }

  /** The options of the job that takes a handed-back tenant on: after a lost lock it waits for the lock's release. */
  const afterHandOff = (lockWasLost: boolean) =>
    lockWasLost ? { startAfterSeconds: LOST_LOCK_RETRY_SECONDS } : {};

  async function drainTenant(tenantId: string): Promise<void> {
    for (;;) {
      const held = await db.withLock(tenantLockKey(tenantId), 0, (lockLost) =>
        drainLocked(tenantId, lockLost),
      );
      if (held === null) return;
      if (held.value !== 'drained') {
        // Out of budget, stopping, or the lock lost: another job (here or in another process) takes
        // it from here.
        await queue.send({ tenantId, batchId: null }, afterHandOff(held.value === 'lock-lost'));
        return;
      }
      // Drained: a batch committed while the lock was held may have had its job give up; look again.
      if ((await findOldestUnfinishedBatches(db, tenantId, 1)).length === 0) return;
    }
  }

  /** When the database started refusing work, while it does: the outage is logged at its start and end. */
  let outageSince: number | null = null;
  const outageSeen = (reason: string) => {
    if (outageSince !== null) return;
    outageSince = Date.now();
    log.warn({ reason }, 'database unavailable: batches wait and are retried with backoff');
  };
  const outageOver = () => {
    if (outageSince === null) return;
    log.info({ seconds: Math.round((Date.now() - outageSince) / 1000) }, 'database available again');
    outageSince = null;
  };

  /**
   * Drains a tenant; while the database refuses work (read-only, full, restarting) tries again after
   * 1, 2, 4, 8 and 16 s, within the job's expiry, so a short outage delays batches by seconds. Past
   * that the job fails: pg-boss retries it, or the stale sweep sends another once writes work again.
   */
  async function drainThroughOutage(tenantId: string): Promise<void> {
    for (let waitMs = 1000; ; waitMs *= 2) {
      try {
        await drainTenant(tenantId);
        outageOver();
        return;
      } catch (error) {
        const reason = databaseUnavailableReason(error);
        if (reason === null || waitMs > OUTAGE_RETRY_MAX_MS) throw error;
        outageSeen(reason);
        await sleep(waitMs, undefined, { signal: shutdown.signal }).catch(() => undefined);
        if (shutdown.signal.aborted) throw new ShutdownError();
      }
    }
  }

  return {
    drainTenant,
    async start() {
      await queue.work(deps.concurrency, async (job) => {
        try {
          if (!shutdown.signal.aborted) return await drainThroughOutage(job.tenantId);
        } catch (error) {
          if (!(error instanceof ShutdownError)) throw error;
        }
        // Stopping, or the drain's lock lost mid-batch (a ShutdownError with the worker running):
        // hand the tenant back. Its batch stays where its last chunk left it, and any worker (this
        // one after a restart) picks the new job up and resumes it.
        await queue.send({ tenantId: job.tenantId, batchId: null }, afterHandOff(!shutdown.signal.aborted));
      });
      await housekeeping.start();
    },
    async stop(timeoutMs) {
      shutdown.abort();
      // Housekeeping's deletion under way and the queue's jobs stop within the same time.
      await Promise.all([housekeeping.stop(timeoutMs), queue.stop(timeoutMs)]);
    },
  };
}
