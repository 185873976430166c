import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import { migrate } from './db/migrate.ts';
import { jobQueueSchema, startJobQueue, throttleErrors, type JobQueue } from './queue/job-queue.ts';
import { loadVerificationKeys, type VerificationKeys } from './auth/keys.ts';
import { createTokenVerifier } from './auth/verify-token.ts';
import { createAuthorize } from './auth/authorize.ts';
import { buildApp, buildOperationsApp } from './http/app.ts';
import { createMetrics, type Metrics } from './observability/metrics.ts';
import type { ReadinessCheck } from './observability/health.routes.ts';
import { createIngestionService } from './ingestion/ingestion.service.ts';
import { createRateLimiter } from './ingestion/rate-limiter.ts';
import { createCatalogService } from './catalog/catalog.service.ts';
import { createItemValidator } from './ingestion/item-validator.ts';
import { createBatchProcessor } from './ingestion/batch-processor.ts';
import { createBatchWorker, type BatchWorker } from './ingestion/batch-worker.ts';
import { startWorkerThread, type WorkerThread } from './ingestion/worker-thread.ts';
import type { AnalysisService } from './analysis/analysis.service.ts';

/** Connections an API keeps open: what 50 concurrent status polls used (docs/performance.md). */
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

/**
 * Runs of a batch in a row without progress, each counted from its start, that may end in an
 * unexpected error or take their process down before the batch is failed (CONTRACT §5).
 */
const MAX_BATCH_ATTEMPTS = 5;
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
}

/**
 * Starts the service for `config`: database and migrations, queue, then the API and/or the worker
 * as `config.role` says. Used by `npm start` and by the tests, which pass their own config.
 */
export async function startService(config: Config, options: StartOptions = {}): Promise<Service> {
  const log = options.logger ?? pino({ level: process.env.LOG_LEVEL ?? 'info' });
  // Keys first: a service that must refuse to start (production without a key) touches nothing.
  const keys =
    config.role === 'worker'
      ? null
      : await loadVerificationKeys(config, {
          onOutage: (error, standIn) =>
            standIn
              ? log.warn(
                  { err: error },
                  'cannot fetch the key set of AUTH_JWKS_URL: the last one fetched verifies for up to an hour',
                )
              : log.error(
                  { err: error },
                  'cannot fetch the key set of AUTH_JWKS_URL, and none was fetched before: tokens it must verify get 503',
                ),
          onStaleExpired: () =>
            log.error(
              'the key set of AUTH_JWKS_URL has failed for over an hour: tokens it must verify now get 503',
            ),
          onRecovery: () => log.info('the key set of AUTH_JWKS_URL can be fetched again'),
        });
  const db = await openServiceDatabase(config, options, log);
  let queue: JobQueue | null = null;
  let app: FastifyInstance | null = null;
  let worker: BatchWorker | null = null;
  let workerThread: WorkerThread | null = null;
  let analysis: AnalysisService | null = null;
  const metrics = createMetrics({ defaults: options.listen !== false });
  metrics.observePool(config.role, () => db.connections?.());
  const httpLogger = options.listen === false ? false : { level: process.env.LOG_LEVEL ?? 'info' };
  const databaseCheck: ReadinessCheck = {
    name: 'database',
    probe: async () => (await db.query('SELECT 1 AS ok')).length === 1,
  };
  const listen = async (started: FastifyInstance) => {
    if (options.listen !== false) await started.listen({ port: config.port, host: config.host });
  };

  try {
    const schema = config.databaseUrl ? config.databaseSchema : undefined;
    await migrate(db, schema);
    queue = await startJobQueue(db, {
      schema: jobQueueSchema(schema),
      pollingIntervalSeconds: config.worker.pollMs / 1000,
      onError: throttleErrors((error, heldBack) =>
        log.warn({ err: error, heldBack }, 'job queue error; pg-boss retries by itself'),
      ),
    });
    const started = queue;

    if (keys) {
      ({ app, analysis } = await buildApi({
        config,
        keys,
        db,
        queue,
        metrics,
        log,
        httpLogger,
        databaseCheck,
        analyzer: options.analyzer ?? config.analysis.enabled,
        onSubmitted: () => (workerThread ? workerThread.wake() : started.nudge()),
      }));
      await listen(app);
    }

    // A worker serves no API, but a supervisor must be able to probe it and Prometheus to scrape
    // its batch metrics, which live in this process only. It listens before its worker takes any
    // batch, so a port already in use fails the start before anything is claimed.
    if (config.role === 'worker' && options.listen !== false) {
      app = await buildOperationsApp({
        config,
        metrics,
        readiness: [databaseCheck, { name: 'queue', probe: () => started.isReady() }],
        logger: httpLogger,
      });
      await listen(app);
    }

    if (config.role === 'all' && config.worker.thread) {
      const thread = await startWorkerThread(config, log);
      workerThread = thread;
      metrics.addSource(() => thread.metrics());
    } else if (config.role !== 'api') {
      worker = createWorker(config, { db, queue, metrics, log });
      await worker.start();
    }
  } catch (error) {
    // Undo what was started, so a failed start leaves no timers, sockets or locks behind.
    await app?.close().catch(() => undefined);
    await analysis?.close().catch(() => undefined);
    await workerThread?.stop(1_000).catch(() => undefined);
    await (worker ?? queue)?.stop(1_000).catch(() => undefined);
    await db.close().catch(() => undefined);
    throw error;
  }
  const running = queue;
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
    worker,
    workerThread,
    analysis,
    metrics,
    async stop() {
      // Order matters: stop taking requests first, then let the worker hand back its batches at a
      // chunk boundary, then stop the queue, and only then close the database they all use.
      if (app) await closeApp(app, REQUEST_DRAIN_MS);
      await analysis?.close();
      await workerThread?.stop(DRAIN_TIMEOUT_MS);
      await worker?.stop(DRAIN_TIMEOUT_MS);
      if (!worker) await running.stop(DRAIN_TIMEOUT_MS);
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
    // Requests come in bursts (a client's 50 pollers at once): an API opens the connections such a
    // burst uses at start and keeps them; a worker opens its own as it needs them.
    keepOpen:
      config.role === 'worker' ? 0 : Math.min(poolSize, options.keptConnections ?? API_KEPT_CONNECTIONS),
    onRefillError: (error) =>
      log.warn({ err: error }, 'cannot reopen the kept database connections; retrying every few seconds'),
  });
}

/**
 * The API of ROLE=api and ROLE=all, not yet listening: token verification, the services behind the
 * routes, and the analyzer when it is on. Should the app fail to build, the analyzer is closed again.
 */
async function buildApi(deps: {
  config: Config;
  keys: VerificationKeys;
  db: Database;
  queue: JobQueue;
  metrics: Metrics;
  log: Logger;
  httpLogger: false | { level: string };
  databaseCheck: ReadinessCheck;
  analyzer: boolean;
  onSubmitted: () => void;
}): Promise<{ app: FastifyInstance; analysis: AnalysisService | null }> {
  const { config, db, log } = deps;
  const authorize = createAuthorize(
    createTokenVerifier({
      keys: deps.keys,
      issuer: config.auth.issuer,
      audience: config.auth.audience,
      tenantClaim: config.auth.tenantClaim,
      requireExp: config.auth.requireExp,
    }),
  );
  // The vision model loads in its worker threads while the rest starts; /readyz waits for it.
  // Its modules (sharp, TensorFlow.js: ~110 MiB of RSS) are imported only when it is on.
  const analyzer = deps.analyzer
    ? (await import('./analysis/start-analyzer.ts')).startAnalyzer({
        allowPrivateHosts: config.analysis.allowPrivateHosts,
        authorize,
        onError: (error, { url }) => log.error({ err: error, url }, 'image analysis failed'),
      })
    : null;
  try {
    const app = await buildApp({
      config,
      authorize,
      ingestion: createIngestionService({
        db,
        queue: deps.queue,
        rateLimiter: createRateLimiter(db, {
          perMinute: config.limits.ratePerMinute,
          maxPendingItems: config.limits.maxPendingItems,
        }),
        onSubmitted: deps.onSubmitted,
      }),
      catalog: createCatalogService({ db }),
      metrics: deps.metrics,
      readiness: [
        deps.databaseCheck,
        // Submissions enqueue their batch's job in their own transaction: without the queue, each is a 500.
        { name: 'queue', probe: () => deps.queue.isReady() },
        ...(analyzer ? [{ name: 'analyzer', probe: async () => analyzer.analysis.isReady() }] : []),
      ],
      extraRoutes: analyzer ? [analyzer.routes] : [],
      logger: deps.httpLogger,
    });
    return { app, analysis: analyzer?.analysis ?? null };
  } catch (error) {
    await analyzer?.analysis.close().catch(() => undefined);
    throw error;
  }
}

/** The batch worker of this thread (ROLE=worker, or ROLE=all on the embedded database), not started. */
function createWorker(
  config: Config,
  deps: { db: Database; queue: JobQueue; metrics: Metrics; log: Logger },
): BatchWorker {
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
  });
}
