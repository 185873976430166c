import type { FastifyInstance } from 'fastify';
import type { Authorize } from '../http/authorize.ts';
import { analysisRoutes } from './analysis.routes.ts';
import { createAnalysisService, type AnalysisService } from './analysis.service.ts';
import type { AnalysisConfig } from './analysis-config.ts';
import { createSceneClassifier, decodeForModel } from './model/index.ts';

/**
 * The analyzer as the API serves it: the service (whose vision model starts loading in its worker
 * threads now) and its route. The server imports this module only when the analyzer is on, so a
 * process without it never loads sharp or TensorFlow.js.
 */
export function startAnalyzer(deps: {
  config: AnalysisConfig;
  allowPrivateHosts: boolean;
  authorize: Authorize;
  onError: (error: unknown, context: { url?: string }) => void;
}): { analysis: AnalysisService; routes: (app: FastifyInstance) => Promise<void> } {
  const analysis = createAnalysisService({
    classifier: createSceneClassifier(),
    decode: decodeForModel,
    allowPrivateHosts: deps.allowPrivateHosts,
    ...deps.config,
    onError: deps.onError,
  });
  return { analysis, routes: analysisRoutes({ analysis, authorize: deps.authorize }) };
}
