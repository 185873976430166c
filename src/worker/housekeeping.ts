import type { WorkerDeps } from './worker-deps.ts';
import {
  deleteExpiredBatches,
  findTenantsWithStaleBatches,
} from '../ingestion/batches/batch-retention.repository.ts';
import { pruneRateLimitWindows } from '../ingestion/rate-limiter.ts';
import { deleteExpiredIdempotencyKeys } from '../ingestion/idempotency-key.repository.ts';
import { deleteExpiredDeliveries } from '../webhooks/delivery.repository.ts';
import { deleteExpiredHistory } from '../catalog/history.repository.ts';

/** An unfinished batch untouched this long has lost its worker (chunks touch it far more often). */
export const STALE_AFTER_SECONDS = 60;
const SWEEP_INTERVAL_MS = 30_000;

/** The worker's chores beside the batches: resuming lost batches, retention, pruning. */
export interface Housekeeping {
  /** Resumes every interrupted batch at once, then repeats the chores every interval. */
  start(): Promise<void>;
  /** Stops the timer and waits up to `timeoutMs` for a deletion under way. */
  stop(timeoutMs: number): Promise<void>;
}

/** Creates the housekeeping of one worker process. */
export function createHousekeeping(
  deps: Pick<WorkerDeps, 'db' | 'queue' | 'log'> & {
    /** How often to look for batches that lost their worker (tests shorten it). */
    intervalMs?: number;
    /** Days an ended batch is kept; 0 or absent keeps it for ever. */
    batchRetentionDays?: number;
    /** Days a product's history entry is kept; 0 or absent keeps it for ever. */
    historyRetentionDays?: number;
  },
): Housekeeping {
  const { db, queue, log } = deps;
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let expiring: Promise<void> | null = null;

  /**
   * Enqueues a drain for tenants whose unfinished batches nobody has touched for a while, and wakes
   * this process's idle loops for them rather than leave them to the next poll. Then deletes
   * rate-limit windows past use and Idempotency-Keys past their 24 hours.
   */
  async function sweep(staleSeconds: number): Promise<void> {
    const stale = await findTenantsWithStaleBatches(db, staleSeconds);
    // At start they are batches a stop interrupted; later, batches no worker took up in time (a
    // tenant lock that cannot be taken, a pool that hands out no connection: docs/deployment.md).
    if (staleSeconds > 0 && stale.length > 0) {
      log.warn(
        { tenants: stale.slice(0, 10), count: stale.length, staleSeconds },
        'unfinished batches untouched for a while: sending their tenants a new job',
      );
    }
    for (const tenantId of stale) await queue.send({ tenantId, batchId: null });
    if (stale.length > 0) queue.wake();
    await pruneRateLimitWindows(db);
    await deleteExpiredIdempotencyKeys(db);
  }

  /**
   * Deletes ended batches past their retention, then the webhook deliveries past the same, then the
   * product history entries past theirs, beside the sweep rather than in it: a first run over years
   * of rows neither holds up the worker's start nor, should it fail, stops it. One run at a time in
   * this process; other processes' runs skip the rows this one is deleting.
   */
  function expireBatches(): void {
    const days = deps.batchRetentionDays ?? 0;
    const historyDays = deps.historyRetentionDays ?? 0;
    if ((days === 0 && historyDays === 0) || expiring !== null) return;
    expiring = (async () => {
      const batches = days === 0 ? 0 : await deleteExpiredBatches(db, days, stopping.signal);
      const deliveries = days === 0 ? 0 : await deleteExpiredDeliveries(db, days, stopping.signal);
      const history = historyDays === 0 ? 0 : await deleteExpiredHistory(db, historyDays, stopping.signal);
      if (batches + deliveries + history > 0) {
        log.info(
          { batches, deliveries, history, retentionDays: days, historyRetentionDays: historyDays },
          'deleted what is past its retention',
        );
      }
    })()
      .catch((error: unknown) => log.warn({ err: error }, 'deleting what is past its retention failed'))
      .finally(() => {
        expiring = null;
      });
  }

  return {
    async start() {
      // Batches interrupted by a stop or a crash resume at once rather than after the stale delay.
      await sweep(0);
      expireBatches();
      timer = setInterval(() => {
        sweep(STALE_AFTER_SECONDS).catch((error: unknown) => log.warn({ err: error }, 'sweep failed'));
        expireBatches();
      }, deps.intervalMs ?? SWEEP_INTERVAL_MS);
      timer.unref();
    },
    async stop(timeoutMs) {
      clearInterval(timer);
      stopping.abort();
      // A deletion under way stops after its statement (each commits alone); one still waiting then
      // (on a table lock) fails harmlessly as the pool closes.
      if (expiring) {
        await Promise.race([expiring, new Promise((resolve) => setTimeout(resolve, timeoutMs).unref())]);
      }
    },
  };
}
