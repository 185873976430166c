import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { ReplicaReads } from '../db/replica-reads.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Logger } from '../observability/logger.ts';
import type { ReadinessCheck } from '../observability/health.routes.ts';
import type { VerificationKeys } from '../auth/keys.ts';
import { createTokenVerifier } from '../auth/verify-token.ts';
import { createIngestionService } from '../ingestion/ingestion.service.ts';
import { createRateLimiter } from '../ingestion/rate-limiter.ts';
import { createCatalogService } from '../catalog/catalog.service.ts';
import { createExportService } from '../export/export.service.ts';
import { createErrorReports } from '../ingestion/error-reports.service.ts';
import { createPreviewService } from '../ingestion/preview.service.ts';
import { createWebhookService } from '../webhooks/webhook.service.ts';
import type { AnalysisService } from '../analysis/analysis.service.ts';
import { createAuthorize } from '../http/authorize.ts';
import { buildApp } from './build-app.ts';

/**
 * The API of ROLE=api and ROLE=all, not yet listening: token verification, the services behind the
 * routes, and the analyzer when it is on. Should the app fail to build, the analyzer is closed again.
 */
export async function buildApi(deps: {
  config: Config;
  keys: VerificationKeys;
  db: Database;
  /** Where the export, the search and product history read (the replica, or `db`). */
  reads: ReplicaReads;
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
  // Its modules (sharp, TensorFlow.js: a large part of the process's memory) are imported only when it is on.
  const analyzer = deps.analyzer
    ? (await import('../analysis/start-analyzer.ts')).startAnalyzer({
        config: config.analysis,
        allowPrivateHosts: config.analysis.allowPrivateHosts,
        authorize,
        onError: (error, { url }) => log.error({ err: error, url }, 'image analysis failed'),
      })
    : null;
  const rateLimiter = createRateLimiter(db, {
    perMinute: config.limits.ratePerMinute,
    maxPendingItems: config.limits.maxPendingItems,
  });
  try {
    const app = await buildApp({
      config,
      authorize,
      ingestion: createIngestionService({
        db,
        queue: deps.queue,
        rateLimiter,
        onSubmitted: deps.onSubmitted,
      }),
      errorReports: createErrorReports({ db }),
      catalog: createCatalogService({
        db,
        reads: deps.reads,
        onDeleted: (target) => deps.metrics.catalogDeletes.inc({ target }),
      }),
      exports: createExportService({ reads: deps.reads }),
      preview: createPreviewService({ db, rateLimiter }),
      webhooks: createWebhookService({
        db,
        queue: deps.queue,
        allowPrivateHosts: config.webhooks.allowPrivateHosts,
      }),
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
