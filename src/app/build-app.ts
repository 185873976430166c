import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.ts';
import { HTTPS_URL_FORMAT } from '../catalog/product-schema.ts';
import type { Authorize } from '../http/authorize.ts';
import type { IngestionService } from '../ingestion/ingestion.service.ts';
import type { ErrorReports } from '../ingestion/error-reports.service.ts';
import { errorReportRoutes } from '../ingestion/error-reports.routes.ts';
import type { PreviewService } from '../ingestion/preview.service.ts';
import type { CatalogService } from '../catalog/catalog.service.ts';
import type { ExportService } from '../export/export.service.ts';
import { exportRoutes } from '../export/export.routes.ts';
import type { Metrics } from '../observability/metrics.ts';
import { ingestionRoutes } from '../ingestion/ingestion.routes.ts';
import { previewRoutes } from '../ingestion/preview.routes.ts';
import { catalogRoutes } from '../catalog/catalog.routes.ts';
import type { WebhookService } from '../webhooks/webhook.service.ts';
import { webhookRoutes } from '../webhooks/webhook.routes.ts';
import { healthRoutes, type ReadinessCheck } from '../observability/health.routes.ts';
import { RequestLog } from '../observability/request-log.ts';
import { clientErrorHandler } from '../http/client-error.ts';
import { dashboardRoute } from '../http/dashboard-route.ts';
import { faviconRoute } from '../http/favicon.ts';
import { frameworkErrorHandler, registerErrorHandler } from '../http/error-handler.ts';
import { registerJsonBodyParser } from '../http/json-body.ts';
import { problemPages } from '../http/problem-pages.ts';
import { requestIdOf } from '../http/request-id.ts';
import { serviceIndex } from '../http/service-index.ts';
import { withRequestId } from '../http/schemas.ts';
import { createValidatorCompiler } from '../http/validator-compiler.ts';

/** What every app of this service is built from, whichever routes it serves. */
interface BaseDependencies {
  config: Config;
  metrics: Metrics;
  /** Fastify's request log; `stream` (default stdout) lets a test read it. */
  logger?: boolean | { level: string; stream?: { write(line: string): void } };
}

/** What the HTTP app is assembled from; every piece is created by the caller (main or a test). */
export interface AppDependencies extends BaseDependencies {
  authorize: Authorize;
  ingestion: IngestionService;
  errorReports: ErrorReports;
  preview: PreviewService;
  catalog: CatalogService;
  exports: ExportService;
  webhooks: WebhookService;
  readiness: ReadinessCheck[];
  /** Registers further routes (the analyzer's) with the same conventions. */
  extraRoutes?: Array<(app: FastifyInstance) => Promise<void>>;
}

/**
 * How long a drain waits, no longer listening, for keep-alive connections to end by themselves.
 * While closing, Fastify answers every request with `Connection: close`, so a client that goes on
 * sending ends its connection cleanly after its next answer. Closing an idle connection instead
 * can cross a request the client is sending on it at that moment (behind a load balancer, a
 * window of a millisecond or so), and that request fails with a reset. What is left after this
 * wait is closed: idle connections at once, requests in flight at the drain's deadline (start-service.ts).
 */
const IDLE_DRAIN_MS = 3_000;

/** Makes `app`'s close stop listening first and wait up to IDLE_DRAIN_MS for its connections to end. */
function drainConnectionsOnClose(app: FastifyInstance): void {
  app.addHook('preClose', async () => {
    await new Promise<void>((resolve) => {
      const waited = setTimeout(resolve, IDLE_DRAIN_MS);
      // net.Server's close, not http.Server's, which would close the idle connections at once too.
      // Its callback runs once every connection has ended (or at once, if not listening).
      net.Server.prototype.close.call(app.server, () => {
        clearTimeout(waited);
        resolve();
      });
    });
  });
}

/**
 * A Fastify app with the conventions of every endpoint (docs/reference.md §2): request ids on every response,
 * JSON body parsing, problem+json errors (an unknown route is `not-found`) and request metrics.
 */
function createBaseApp({ config, metrics, logger }: BaseDependencies) {
  const app = Fastify({
    logger: logger ?? false,
    // One line per request instead of two (request-log.ts).
    logController: new RequestLog(),
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    trustProxy: false,
    // Responses are serialized, not validated: the item URL format is only named for the serializer's
    // Ajv (it compiles the unions of a product view), so it does not warn of an unknown format.
    serializerOpts: { ajv: { formats: { [HTTPS_URL_FORMAT]: true } } },
    // While draining, requests on open connections are still answered normally (with problem
    // bodies and request ids); the listener is closed, so no new connections arrive.
    return503OnClosing: false,
    // A request not received whole in time is answered 408 (client-error.ts) and its connection
    // closed. Node checks open requests every `connectionsCheckingInterval`, so a short timeout
    // needs a shorter interval than its 30 s default, and Node 20 enforces no request timeout
    // shorter than the headers' (60 s by default).
    requestTimeout: config.requestTimeoutMs,
    http: {
      headersTimeout: Math.min(60_000, config.requestTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(config.requestTimeoutMs / 4)),
    },
    // Long enough for any 255-character key, percent-encoded; longer paths answer 404.
    routerOptions: { maxParamLength: 2048 },
    frameworkErrors: frameworkErrorHandler(config.publicBaseUrl),
    // Requests Node's parser rejects never reach a route or hook; this answers them on the socket.
    clientErrorHandler: clientErrorHandler(config.publicBaseUrl),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(createValidatorCompiler());
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  registerJsonBodyParser(app);
  registerErrorHandler(app, config.publicBaseUrl);
  metrics.instrument(app);
  drainConnectionsOnClose(app);
  return app;
}

/**
 * Builds the Fastify app. Registration order is the system's order: request ids, body parsing and
 * error rendering first (everything below relies on them), then the OpenAPI collector (it must see
 * every route), then the routes themselves.
 */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const { config } = deps;
  const app = createBaseApp(deps);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Product ingestion and image stageability API',
        version: '0.1.0-preview',
        description:
          'Asynchronous catalog ingestion for furniture retailers, and image stageability analysis.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
      security: [{ bearerAuth: [] }],
    },
    // A route may validate less than it documents (the submission checks only the envelope and
    // leaves items to the worker); `config.openapiBody` is then what the document shows.
    // Every operation's shared X-Request-Id is added here, once, rather than in each route.
    transform: ({ schema, url, route }) => {
      const body = route.config?.openapiBody;
      return { schema: withRequestId(body ? { ...schema, body } : schema), url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });

  await app.register(healthRoutes, { checks: deps.readiness, metrics: deps.metrics });
  await app.register(problemPages);
  await app.register(serviceIndex);
  await app.register(dashboardRoute, { oidc: config.uiOidc });
  await app.register(faviconRoute);
  await app.register(ingestionRoutes, {
    ingestion: deps.ingestion,
    errorReports: deps.errorReports,
    authorize: deps.authorize,
    maxBodyBytes: config.maxBodyBytes,
  });
  await app.register(errorReportRoutes, { errorReports: deps.errorReports, authorize: deps.authorize });
  await app.register(previewRoutes, {
    preview: deps.preview,
    authorize: deps.authorize,
    maxBodyBytes: config.maxBodyBytes,
  });
  await app.register(catalogRoutes, { catalog: deps.catalog, authorize: deps.authorize });
  await app.register(exportRoutes, { exports: deps.exports, authorize: deps.authorize });
  await app.register(webhookRoutes, { webhooks: deps.webhooks, authorize: deps.authorize });
  for (const register of deps.extraRoutes ?? []) await app.register(register);

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.ready();
  return app;
}

/** What the operations app of a worker process serves from. */
export interface OperationsAppDependencies extends BaseDependencies {
  readiness: ReadinessCheck[];
}

/**
 * Builds the app a ROLE=worker process listens with: only `/healthz`, `/readyz` and `/metrics`, so a
 * supervisor can probe it and Prometheus can scrape its batch metrics. It serves no API and no
 * OpenAPI document; anything else is a `not-found` problem, as on the API.
 */
export async function buildOperationsApp(deps: OperationsAppDependencies): Promise<FastifyInstance> {
  const app = createBaseApp(deps);
  await app.register(healthRoutes, { checks: deps.readiness, metrics: deps.metrics });
  await app.ready();
  return app;
}
