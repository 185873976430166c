import { buildApp } from '../src/app/build-app.ts';
import { loadConfig } from '../src/config.ts';
import { createMetrics } from '../src/observability/metrics.ts';
import { analysisRoutes } from '../src/analysis/analysis.routes.ts';
import type { Authorize } from '../src/http/authorize.ts';

/** A dependency the document does not need: any use of it while the routes register is a bug here. */
function unused<T>(name: string): T {
  return new Proxy(
    {},
    {
      get: () => {
        throw new Error(`building the OpenAPI document used ${name}, which it does not have`);
      },
    },
  ) as T;
}

/**
 * The service's OpenAPI document, as `GET /openapi.json` serves it with the analyzer on, built
 * without a database or the vision model: registering the routes reads only their schemas.
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({ NODE_ENV: 'test', AUTH_JWT_SECRET: 'document-only'.repeat(4) });
  const authorize: Authorize = () => async () => {
    throw new Error('the document answers no request');
  };
  const app = await buildApp({
    config,
    metrics: createMetrics({ defaults: false }),
    authorize,
    ingestion: unused('the ingestion service'),
    errorReports: unused('the error reports'),
    preview: unused('the preview service'),
    catalog: unused('the catalog service'),
    exports: unused('the export service'),
    webhooks: unused('the webhook service'),
    readiness: [],
    extraRoutes: [analysisRoutes({ analysis: unused('the analyzer'), authorize })],
  });
  try {
    // As served: JSON, without the properties JSON leaves out.
    return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>;
  } finally {
    await app.close();
  }
}
