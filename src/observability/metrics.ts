import type { FastifyInstance } from 'fastify';
import type { PoolConnections } from '../db/database.ts';
import {
  AggregatorRegistry,
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

/** One registry's metrics as plain data, which can cross a thread boundary. */
export type MetricsSnapshot = Array<MetricObjectWithValues<MetricValue<string>>>;

/** The service's Prometheus metrics, one registry per process (or per test app). */
export interface Metrics {
  registry: Registry;
  itemsSettled: Counter<'outcome'>;
  batchesFinished: Counter<'status'>;
  batchSeconds: Histogram;
  /** Deletes from the catalog (docs/reference.md §10.5), by what was deleted: `product` or `variant`. */
  catalogDeletes: Counter<'target'>;
  /**
   * Requests whose reads a replica may serve (DATABASE_READ_URL), by where they went: `replica`, or
   * the primary because the replica was `behind` the request's start or `failed` (a statement
   * failed there and was run again on the primary). docs/deployment.md#read-replica.
   */
  replicaReads: Counter<'outcome'>;
  /** Webhook delivery attempts by outcome: `delivered`, `retry` (another attempt is scheduled), `failed`. */
  webhookDeliveries: Counter<'outcome'>;
  webhookAttemptSeconds: Histogram;
  /** Age of the oldest pending webhook delivery, set by the worker's delivery sweep. */
  webhookOldestPendingSeconds: Gauge;
  /** Records the duration of every HTTP request by route and status. */
  instrument(app: FastifyInstance): void;
  /**
   * Shows the database pool's connections, read from `read` at each scrape, labelled with the
   * `role` of the thread that owns the pool (with a worker thread, `all` is the API thread's), and
   * those of its reader pool (`Database.reader`) from `readReader`.
   */
  observePool(role: string, read: PoolReader, readReader?: PoolReader): void;
  /** Adds metrics kept elsewhere (the worker thread's) to what {@link Metrics.render} shows. */
  addSource(source: () => Promise<MetricsSnapshot | null>): void;
  /** The Prometheus text of this registry and every source, same-named series summed. */
  render(): Promise<string>;
}

/** Reads a connection pool's state at a scrape; undefined when there is no such pool. */
type PoolReader = () => PoolConnections | undefined;

/**
 * The gauges of one connection pool, read at each scrape: `<prefix>_connections{role,state}` (idle or
 * busy) and `<prefix>_waiting_queries{role}`. No samples while `read` finds no pool.
 */
function poolGauges(
  registry: Registry,
  prefix: string,
  noun: string,
  read: () => { role: string; now: PoolConnections | undefined } | null,
): void {
  new Gauge({
    name: `${prefix}_connections`,
    help: `Open ${noun}s, by the role of the thread that owns the pool and by state`,
    labelNames: ['role', 'state'] as const,
    registers: [registry],
    collect() {
      const pool = read();
      if (!pool?.now) return;
      this.set({ role: pool.role, state: 'idle' }, pool.now.idle);
      this.set({ role: pool.role, state: 'busy' }, pool.now.open - pool.now.idle);
    },
  });
  new Gauge({
    name: `${prefix}_waiting_queries`,
    help: `Queries waiting for a free ${noun}, by the role of the thread that owns the pool`,
    labelNames: ['role'] as const,
    registers: [registry],
    collect() {
      const pool = read();
      if (pool?.now) this.set({ role: pool.role }, pool.now.waiting);
    },
  });
}

/** A counter in `registry` with the one label every service counter is split by. */
function countBy<L extends string>(registry: Registry, label: L, name: string, help: string): Counter<L> {
  return new Counter({ name, help, labelNames: [label] as const, registers: [registry] });
}

/** Creates the metrics; `defaults` adds Node's process metrics (off in tests). */
export function createMetrics({ defaults = true }: { defaults?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (defaults) collectDefaultMetrics({ register: registry });
  const httpSeconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const sources: Array<() => Promise<MetricsSnapshot | null>> = [];
  let pool: { role: string; read: () => PoolConnections | undefined; readReader?: PoolReader } | null = null;
  poolGauges(registry, 'db_pool', 'database connection', () =>
    pool ? { role: pool.role, now: pool.read() } : null,
  );
  // Reads beside a chunk's transaction (Database.reader), on a pool of their own.
  poolGauges(registry, 'db_reader_pool', 'reader connection', () =>
    pool?.readReader ? { role: pool.role, now: pool.readReader() } : null,
  );
  return {
    registry,
    itemsSettled: countBy(
      registry,
      'outcome',
      'ingestion_items_total',
      'Batch items settled by the worker, by outcome (upserted or failed)',
    ),
    batchesFinished: countBy(
      registry,
      'status',
      'ingestion_batches_total',
      'Batches that reached a terminal state, by status',
    ),
    batchSeconds: new Histogram({
      name: 'ingestion_batch_duration_seconds',
      help: 'Time from a worker picking a batch up to its terminal state',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    catalogDeletes: countBy(
      registry,
      'target',
      'catalog_deletes_total',
      'Products and variants deleted from the catalog through the API, by target',
    ),
    replicaReads: countBy(
      registry,
      'outcome',
      'db_replica_reads_total',
      'Reads a replica may serve (export, search, history), by outcome: replica, or on the primary because the replica was behind or failed, or skipped (not asked: it was behind or failing within the last second, or one read is asking it again)',
    ),
    webhookDeliveries: countBy(
      registry,
      'outcome',
      'webhook_deliveries_total',
      'Webhook delivery attempts by outcome: delivered, retry (another attempt is scheduled) or failed',
    ),
    webhookAttemptSeconds: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Time from sending a webhook request to its answer (or the failure to get one)',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
      registers: [registry],
    }),
    webhookOldestPendingSeconds: new Gauge({
      name: 'webhook_oldest_pending_delivery_seconds',
      help: 'Age of the oldest webhook delivery not yet delivered or failed (0 when none is pending)',
      registers: [registry],
    }),
    instrument(app) {
      app.addHook('onResponse', async (request, reply) => {
        httpSeconds.observe(
          {
            method: request.method,
            route: request.routeOptions.url ?? 'unmatched',
            status: String(reply.statusCode),
          },
          reply.elapsedTime / 1000,
        );
      });
    },
    observePool(role, read, readReader) {
      pool = { role, read, readReader };
    },
    addSource(source) {
      sources.push(source);
    },
    async render() {
      const snapshots = (await Promise.all(sources.map((source) => source()))).filter((s) => s !== null);
      if (snapshots.length === 0) return registry.metrics();
      // Only the series the sources also have are summed; this registry's own (process start time,
      // heap, event loop) are shown as they are, since aggregation would drop or mangle some.
      const shared = new Set(snapshots.flatMap((snapshot) => snapshot.map((metric) => metric.name)));
      const own = (await registry.getMetricsAsJSON()).filter((metric) => shared.has(metric.name));
      const summed = await AggregatorRegistry.aggregate([own, ...snapshots]).metrics();
      const rest = await Promise.all(
        registry
          .getMetricsAsArray()
          .filter((metric) => !shared.has(metric.name))
          .map((metric) => registry.getSingleMetricAsString(metric.name)),
      );
      return `${[...rest, summed.trimEnd()].join('\n\n')}\n`;
    },
  };
}
