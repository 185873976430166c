import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from '../config.ts';
import { openDatabase, type Database } from '../db/database.ts';
import { explainPoolerRefusal, migrateAndCheck } from '../db/deployment-check.ts';
import { jobQueueSchema, startJobQueue, throttleErrors, type JobQueue } from '../queue/job-queue.ts';
import { loadVerificationKeys } from '../auth/keys.ts';
import { logKeySetEvents } from '../auth/key-set-log.ts';
import { buildOperationsApp } from './build-app.ts';
import { buildApi } from './build-api.ts';
import { createMetrics, type Metrics } from '../observability/metrics.ts';
import type { ReadinessCheck } from '../observability/health.routes.ts';
import { startWorkerSide, type WorkerSide } from './start-worker-side.ts';
import type { BatchWorker } from '../worker/batch-worker.ts';
import type { WorkerThread } from './worker-thread.ts';
import type { AnalysisService } from '../analysis/analysis.service.ts';
import type { ReplicaReads } from '../db/replica-reads.ts';
import { startReplicaReads } from './start-replica-reads.ts';

/** Connections an API keeps open: enough for a client's burst of status polls (docs/performance.md). */
const API_KEPT_CONNECTIONS = 12;

/** A running service: the parts its role needs, and how to stop them in order. */
export interface Service {
  config: Config;
  db: Database;
  queue: JobQueue;
  /** The API (ROLE=api/all), or the health, readiness and metrics app of a listening worker. */
  app: FastifyInstance | null;
  /** The worker in this thread (ROLE=worker, or ROLE=all on the embedded database). */
  worker: BatchWorker | null;
  /** The worker in a thread of its own (ROLE=all on a PostgreSQL server, WORKER_THREAD). */
  workerThread: WorkerThread | null;
  analysis: AnalysisService | null;
  metrics: Metrics;
  /** Stops accepting requests, hands back or finishes in-flight work, closes the database. */
  stop(): Promise<void>;
}

const DRAIN_TIMEOUT_MS = 8_000;
/**
 * How long a drain waits for requests in flight before it closes their connections: a client that
 * stalls mid-upload would otherwise hold the process until it gave up (Fastify sets no request
 * timeout). With the worker's own budget, a drain stays within a supervisor's usual grace period.
 */
const REQUEST_DRAIN_MS = 5_000;

/** Closes the app: no new connections, then requests in flight get `graceMs` before theirs are cut. */
async function closeApp(app: FastifyInstance, graceMs: number): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}

/** How a service is started; tests pass what no variable sets. */
export interface StartOptions {
  logger?: Logger;
  listen?: boolean;
  dataDir?: string | null;
  embeddedTemplate?: Blob;
  /** Load the vision model and serve the analysis route (default: ANALYSIS_ENABLED). */
  analyzer?: boolean;
  /**
   * Connections an API keeps open (default {@link API_KEPT_CONNECTIONS}). Tests, which start
   * dozens of services on one PostgreSQL server, keep fewer so as not to exhaust its connections.
   */
  keptConnections?: number;
  /**
   * Aborted when a drain is asked for while the service is still starting (SIGTERM before the
   * worker side is up): the API stops taking requests at once, so the drain's clock runs from the
   * signal rather than from the end of the start, and a worker side not yet started is not started.
   */
  drain?: AbortSignal;
}

/**
 * Starts the service for `config`, in this order: the verification keys (a service that must refuse
 * to start touches nothing), the database and its migrations, the queue, then the API side
 * (ROLE=api/all) and the worker side (ROLE=worker/all). A failed start stops what it started.
 * Used by `npm start` and by the tests, which pass their own config.
 */
export async function startService(config: Config, options: StartOptions = {}): Promise<Service> {
  const log = options.logger ?? pino({ level: config.logLevel });
  const listening = options.listen !== false;
  const keys = config.role === 'worker' ? null : await loadVerificationKeys(config, logKeySetEvents(log));
  const db = await openServiceDatabase(config, options, log).catch((error: unknown) => {
    throw explainPoolerRefusal(error);
  });
  const metrics = createMetrics({ defaults: listening });
  metrics.observePool(
    config.role,
    () => db.connections?.(),
    () => db.readerConnections?.(),
  );
  const httpLogger = listening ? { level: config.logLevel } : false;
  const databaseCheck: ReadinessCheck = {
    name: 'database',
    probe: async () => (await db.query('SELECT 1 AS ok')).length === 1,
  };
  let queue: JobQueue | null = null;
  let app: FastifyInstance | null = null;
  let analysis: AnalysisService | null = null;
  let reads: ReplicaReads | null = null;
  let workerSide: WorkerSide | null = null;
  let listeningApp: FastifyInstance | null = null;
  let closingRequests: Promise<void> | null = null;
  /** Closes the listening app once, whether a drain asked for it while starting or stop() did. */
  const closeRequests = () =>
    (closingRequests ??= listeningApp ? closeApp(listeningApp, REQUEST_DRAIN_MS) : null);
  const draining = () => options.drain?.aborted === true;
  options.drain?.addEventListener('abort', () => void closeRequests(), { once: true });
  const listen = async (started: FastifyInstance) => {
    await started.listen({ port: config.port, host: config.host });
    listeningApp = started;
    if (draining()) void closeRequests();
  };

  try {
    // The database and the queue.
    const schema = config.databaseUrl ? config.databaseSchema : undefined;
    await migrateAndCheck(db, schema);
    queue = await startJobQueue(db, {
      schema: jobQueueSchema(schema),
      pollingIntervalSeconds: config.worker.pollMs / 1000,
      onError: throttleErrors((error, heldBack) =>
        log.warn({ err: error, heldBack }, 'job queue error; pg-boss retries by itself'),
      ),
    });
    const started = queue;

    // The API side. A submission wakes this process's worker, wherever it runs, once it has started.
    if (keys) {
      // Checked before the API listens: a replica it cannot use fails the start with one line.
      reads = await startReplicaReads(config, { primary: db, metrics, log });
      ({ app, analysis } = await buildApi({
        config,
        keys,
        db,
        reads,
        queue,
        metrics,
        log,
        httpLogger,
        databaseCheck,
        analyzer: options.analyzer ?? config.analysis.enabled,
        onSubmitted: () => (workerSide ? workerSide.wake() : started.wake()),
      }));
      if (listening) await listen(app);
    }

    // The worker side. A worker serves no API, but a supervisor must be able to probe it and
    // Prometheus to scrape its batch metrics, which live in this process only. It listens before
    // its worker takes any batch, so a port already in use fails the start before anything is claimed.
    if (config.role === 'worker' && listening) {
      app = await buildOperationsApp({
        config,
        metrics,
        readiness: [databaseCheck, { name: 'queue', probe: () => started.isReady() }],
        logger: httpLogger,
      });
      await listen(app);
    }
    if (config.role !== 'api' && !draining())
      workerSide = await startWorkerSide(config, { db, queue, metrics, log }, options.drain);
  } catch (error) {
    // Undo what was started, so a failed start leaves no timers, sockets or locks behind.
    await (closeRequests() ?? app?.close())?.catch(() => undefined);
    await analysis?.close().catch(() => undefined);
    await (workerSide ?? queue)?.stop(1_000).catch(() => undefined);
    await reads?.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
  const running = queue;
  const worker = workerSide;
  const replicaReads = reads;
  if (config.role === 'api' && !config.databaseUrl) {
    log.warn(
      'ROLE=api on the embedded database: no other process can open it while this one runs, so ' +
        'accepted batches wait until a process with a worker (ROLE=all or ROLE=worker) opens DATA_DIR',
    );
  }

  return {
    config,
    db,
    queue: running,
    app,
    worker: worker?.worker ?? null,
    workerThread: worker?.thread ?? null,
    analysis,
    metrics,
    async stop() {
      // Order matters: stop taking requests first, let the worker hand back its batches at a chunk
      // boundary, stop the queue once no request can send to it, and only then close the database
      // they all use. A worker in its own thread hands back while the requests get their grace
      // (WorkerSide.stop), so a drain takes the longer of the two, not their sum.
      const requestsClosed = (async () => {
        await (closeRequests() ?? app?.close());
        await analysis?.close();
      })();
      if (worker) await worker.stop(DRAIN_TIMEOUT_MS, requestsClosed);
      else await requestsClosed.then(() => running.stop(DRAIN_TIMEOUT_MS));
      await replicaReads?.close();
      await db.close();
    },
  };
}

/** The database of a service, its pool sized for the role. */
function openServiceDatabase(config: Config, options: StartOptions, log: Logger): Promise<Database> {
  const poolSize = config.worker.concurrency * 2 + 8;
  return openDatabase({
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    dataDir: options.dataDir === undefined ? config.dataDir : options.dataDir,
    template: options.embeddedTemplate,
    // Each batch slot holds a connection for its tenant lock, uses another for its writes and, on
    // and off, a third to prepare its next batch; the rest serve the API and the queue's polling.
    // With the worker in its own thread, each thread has a pool of this size.
    poolSize,
    // A batch slot reads the rows its chunk will change beside the chunk's transaction
    // (chunk-writer.ts): a connection per slot, up to 8, since a read takes a fraction of a chunk's
    // time and a slot waiting for a reader waits only for another slot's read to end.
    readerPoolSize: config.role === 'api' ? 0 : Math.min(config.worker.concurrency, 8),
    // Requests come in bursts (a client's 50 pollers at once): an API opens the connections such a
    // burst uses at start and keeps them; a worker opens its own as it needs them.
    keepOpen:
      config.role === 'worker' ? 0 : Math.min(poolSize, options.keptConnections ?? API_KEPT_CONNECTIONS),
    onRefillError: (error) =>
      log.warn({ err: error }, 'cannot reopen the kept database connections; retrying every few seconds'),
  });
}
