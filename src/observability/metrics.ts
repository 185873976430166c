import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The service's Prometheus metrics, one registry per process (or per test app). */
export interface Metrics {
  registry: Registry;
  itemsSettled: Counter<'outcome'>;
  batchesFinished: Counter<'status'>;
  batchSeconds: Histogram;
  /** Records the duration of every HTTP request by route and status. */
  instrument(app: FastifyInstance): void;
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
  return {
    registry,
    itemsSettled: new Counter({
      name: 'ingestion_items_total',
      help: 'Batch items settled by the worker, by outcome (upserted or failed)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    batchesFinished: new Counter({
      name: 'ingestion_batches_total',
      help: 'Batches that reached a terminal state, by status',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    batchSeconds: new Histogram({
      name: 'ingestion_batch_duration_seconds',
      help: 'Time from a worker picking a batch up to its terminal state',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
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
  };
}
