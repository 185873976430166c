import { createRequire } from 'node:module';
import PgBoss from 'pg-boss';
import { DEFAULT_WORKER_POLL_MS } from '../config.ts';
import type { Database, Queryable } from '../db/database.ts';

/**
 * The one queue of this service: "a batch of this tenant is waiting". One job per batch, sent in the
 * batch's own transaction, so a committed batch always has a job (no deduplication by tenant: a
 * deduplicated send could lean on a job that is fetched before the batch commits). A job that finds
 * its tenant already being drained ends at once, and the loop fetches the next without sleeping.
 */
export const INGEST_QUEUE = 'ingest-batch';

/**
 * The queue of webhook delivery attempts (docs/reference.md §10.1). A job only says "this delivery may be
 * due": the delivery's row is the truth (the outbox), and the dispatcher's sweep sends a job again
 * for any due delivery nobody attempts, so jobs need no retries of their own. Deduplicated per
 * delivery while queued, so the sweep can send without asking what is already waiting.
 */
export const DELIVERY_QUEUE = 'webhook-delivery';

/** A delivery job: ids only. */
export interface DeliveryJob {
  tenantId: string;
  deliveryId: string;
}

/** A job carries ids only; the batch itself lives in the database. */
export interface IngestJob {
  tenantId: string;
  batchId: string | null;
}

/**
 * How long a job may run before pg-boss takes it for dead and retries it. pg-boss 10 has no
 * heartbeat, so this bounds how late a batch is resumed after its worker died; handlers keep their
 * own runs well below it (see DRAIN_BUDGET_MS) so a live worker is never taken for a dead one.
 */
export const JOB_EXPIRE_SECONDS = 60;
/**
 * How often expired jobs are looked for: with the expiry and the next poll, a dead worker's batch
 * resumes in ≤ 90 s plus the poll interval (the worker's stale sweep is the other, faster path).
 */
const MAINTENANCE_INTERVAL_SECONDS = 30;

/** The job queue, on the same PostgreSQL as the data (pg-boss 10). */
export interface JobQueue {
  /** The PostgreSQL schema pg-boss keeps its tables in. */
  readonly schema: string;
  /** Enqueues a job; with `tx`, in that transaction, so the job exists exactly when the batch does. */
  send(job: IngestJob, options?: { tx?: Queryable; startAfterSeconds?: number }): Promise<void>;
  /**
   * Wakes this process's idle polling loops, so a job sent here starts now rather than at the next
   * poll (up to the polling interval later). Other processes still find it by polling.
   */
  wake(): void;
  /** Starts `concurrency` polling loops that hand jobs to `handler` one at a time each. */
  work(concurrency: number, handler: (job: IngestJob) => Promise<void>): Promise<void>;
  /**
   * Enqueues an attempt of a webhook delivery unless one is already waiting, and wakes this
   * process's delivery loops.
   */
  sendDelivery(job: DeliveryJob): Promise<void>;
  /** Starts `concurrency` loops that hand delivery jobs to `handler`, as {@link JobQueue.work} does. */
  workDeliveries(concurrency: number, handler: (job: DeliveryJob) => Promise<void>): Promise<void>;
  /**
   * Whether the queue can hand out jobs: not stopped, and its own table answers with this service's
   * queue (one read by primary key, cheap enough for every readiness probe).
   */
  isReady(): Promise<boolean>;
  /** Stops fetching; waits up to `timeoutMs` for running handlers. */
  stop(timeoutMs: number): Promise<void>;
}

/** pg-boss's statements, to tell its job completions from its other writes (no types ship for them). */
const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as {
  completeJobs(schema: string): string;
  failJobsById(schema: string): string;
};

/**
 * pg-boss's database adapter: PGlite and transactions run multi-statement SQL through `exec`.
 * pg-boss completes and fails a worker's jobs without awaiting the write (pg-boss 10,
 * `manager.work`): one the database refuses (read-only, restarting) would be an unhandled
 * rejection, which ends the process. Such a completion is reported to `onUnawaited` and dropped
 * instead: the job stays active until it expires, and its retry finds the work done.
 */
function adapterFor(
  db: Queryable,
  {
    isClosed = () => false,
    schema,
    onUnawaited,
  }: {
    isClosed?: () => boolean;
    schema?: string;
    onUnawaited?: (error: unknown) => void;
  } = {},
) {
  const unawaited = schema ? new Set([plans.completeJobs(schema), plans.failJobsById(schema)]) : new Set();
  const run = async (text: string, values?: unknown[]) => {
    if (values && values.length > 0) return { rows: await db.query(text, values) };
    // pg-boss sends its DDL and locked sections as one multi-statement string without parameters.
    return { rows: await db.exec(text) };
  };
  // What pg-boss reads of a completion's answer: how many jobs it changed (none, when dropped).
  const dropped = { rows: [{ count: 0 }] };
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (!unawaited.has(text)) return isClosed() ? { rows: [] } : run(text, values);
      // A completion that lands after stop() finds the database closed: dropped as well.
      if (isClosed()) return dropped;
      return run(text, values).catch((error: unknown) => {
        onUnawaited?.(error);
        return dropped;
      });
    },
  };
}

/**
 * Passes on at most one error per `intervalMs`, with the count of those held back since the last:
 * while the database is down, pg-boss fails on every poll and every maintenance run.
 */
export function throttleErrors(
  report: (error: unknown, heldBack: number) => void,
  { intervalMs = 60_000, now = Date.now }: { intervalMs?: number; now?: () => number } = {},
): (error: unknown) => void {
  let last = -Infinity;
  let heldBack = 0;
  return (error) => {
    const at = now();
    if (at - last < intervalMs) {
      heldBack++;
      return;
    }
    last = at;
    report(error, heldBack);
    heldBack = 0;
  };
}

/**
 * The job queue's PostgreSQL schema: `<schema>_jobs` beside the service's own schema on a server,
 * else pg-boss's default.
 */
export function jobQueueSchema(serviceSchema: string | undefined): string {
  return serviceSchema ? `${serviceSchema}_jobs` : 'pgboss';
}

/** Starts pg-boss on `db` (creating its schema if needed) and makes sure the queue exists. */
export async function startJobQueue(
  db: Database,
  {
    pollingIntervalSeconds = DEFAULT_WORKER_POLL_MS / 1000,
    schema = 'pgboss',
    maintenanceIntervalSeconds = MAINTENANCE_INTERVAL_SECONDS,
    onError = () => undefined,
  }: {
    pollingIntervalSeconds?: number;
    schema?: string;
    maintenanceIntervalSeconds?: number;
    /**
     * Told of pg-boss's own failures, which it retries by itself: its maintenance runs (expiry of
     * dead workers' jobs, archiving), and the completions of jobs the database refused (the job
     * then expires and is retried). A failed fetch is not one: pg-boss drops it and polls again.
     */
    onError?: (error: unknown) => void;
  } = {},
): Promise<JobQueue> {
  let closed = false;
  let stopping = false;
  const workerIds: string[] = [];
  const deliveryWorkerIds: string[] = [];
  const boss = new PgBoss({
    db: adapterFor(db, { isClosed: () => closed, schema, onUnawaited: (error) => onError(error) }),
    schema,
    supervise: true,
    schedule: false,
    maintenanceIntervalSeconds,
  });
  // Maintenance errors (a database restart, say) are retried by pg-boss at the next run; they are
  // only reported.
  boss.on('error', onError);
  // pg-boss creates its schema and a queue's partition without a lock of its own: processes starting
  // together on a new database deadlocked there (40P01). They take turns, as migrations do.
  const setUp = await db
    .withLock(`job-queue-setup:${schema}`, 120_000, async () => {
      await boss.start();
      await boss.createQueue(INGEST_QUEUE, {
        name: INGEST_QUEUE,
        retryLimit: 20,
        retryDelay: 2,
        retryBackoff: true,
        expireInSeconds: JOB_EXPIRE_SECONDS,
      });
      await boss.createQueue(DELIVERY_QUEUE, {
        name: DELIVERY_QUEUE,
        // `short`: at most one queued job per singleton key (the delivery id).
        policy: 'short',
        retryLimit: 0,
        expireInSeconds: JOB_EXPIRE_SECONDS,
      });
    })
    .catch(async (error: unknown) => {
      // A started pg-boss keeps polling and supervising: a failed start must not leave it behind.
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      throw error;
    });
  if (!setUp) throw new Error('Could not take the job queue set-up lock within 120 s');

  /** Starts `concurrency` loops on `queue`, each handing one job at a time to `handler`. */
  const workLoops = async <T extends object>(
    queue: string,
    concurrency: number,
    handler: (job: T) => Promise<void>,
  ): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < concurrency; i++) {
      const id: string = await boss.work<T>(
        queue,
        { pollingIntervalSeconds, batchSize: 1 },
        async ([job]) => {
          try {
            if (job) await handler(job.data);
          } finally {
            // Fetch again at once after a job rather than sleeping out the polling interval.
            boss.notifyWorker(id);
          }
        },
      );
      ids.push(id);
    }
    return ids;
  };

  return {
    schema,
    async send(job, { tx, startAfterSeconds } = {}) {
      const options: PgBoss.SendOptions & { db?: PgBoss.Db } = {};
      if (tx) options.db = adapterFor(tx);
      if (startAfterSeconds) options.startAfter = startAfterSeconds;
      await boss.send(INGEST_QUEUE, job as unknown as object, options);
    },
    async work(concurrency, handler) {
      workerIds.push(...(await workLoops(INGEST_QUEUE, concurrency, handler)));
    },
    async sendDelivery(job) {
      await boss.send(DELIVERY_QUEUE, job as unknown as object, { singletonKey: job.deliveryId });
      for (const id of deliveryWorkerIds) boss.notifyWorker(id);
    },
    async workDeliveries(concurrency, handler) {
      deliveryWorkerIds.push(...(await workLoops(DELIVERY_QUEUE, concurrency, handler)));
    },
    wake() {
      for (const id of workerIds) boss.notifyWorker(id);
    },
    async isReady() {
      return !stopping && (await boss.getQueue(INGEST_QUEUE)) !== null;
    },
    async stop(timeoutMs) {
      stopping = true;
      await boss.stop({ graceful: true, wait: true, timeout: timeoutMs });
      // Let completions that pg-boss fired without awaiting reach the database first.
      await new Promise((resolve) => setTimeout(resolve, 200));
      closed = true;
    },
  };
}
