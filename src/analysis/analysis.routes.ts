import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf, type Authorize } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { AuthChallengeHeaders, documented, ERROR_DESCRIPTIONS, RetryAfterHeaders } from '../http/schemas.ts';
import type { AnalysisService } from './analysis.service.ts';
import { AnalysisErrorBody, StageabilityRequest, StageabilityResponse } from './analysis.schemas.ts';

/**
 * The stageability operation (spec operation 4, docs/reference.md §8). Thin: the schema rejects bad bodies
 * (rendered as the spec's 400 by the central error handler), the hook checks the token before the
 * body is read, and the service does the rest.
 */
export function analysisRoutes(deps: {
  analysis: AnalysisService;
  authorize: Authorize;
}): (app: FastifyInstance) => Promise<void> {
  return async (instance) => {
    const app = instance.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/analysis/stageability/multiple',
      {
        config: { errorShape: 'analysis' },
        onRequest: deps.authorize(SCOPES.analysisRun),
        schema: {
          tags: ['analysis'],
          summary: 'Analyze up to 10 images for virtual staging',
          description:
            'Fetches each URL (http/https only, public addresses only, 10 s, 25 MiB), measures its quality, ' +
            'classifies the room and says whether it can be staged. A URL that cannot be analyzed yields an ' +
            'entry with roomType "unknown", confidence 0 and the reason in details.',
          body: StageabilityRequest,
          response: {
            200: documented('One entry per URL, in request order, and a summary', StageabilityResponse),
            400: documented(
              'imageUrls missing, not an array, empty, over 10 or not all strings; or malformed JSON',
              AnalysisErrorBody,
            ),
            401: documented(ERROR_DESCRIPTIONS[401], AnalysisErrorBody, AuthChallengeHeaders),
            403: documented(ERROR_DESCRIPTIONS[403], AnalysisErrorBody),
            413: documented(ERROR_DESCRIPTIONS[413], AnalysisErrorBody),
            415: documented(ERROR_DESCRIPTIONS[415], AnalysisErrorBody),
            429: documented(
              'The analyzer’s queue, or this tenant’s share of it, is full; retry after Retry-After seconds',
              AnalysisErrorBody,
              RetryAfterHeaders,
            ),
          },
        },
      },
      async (request) => deps.analysis.analyze(request.body.imageUrls, principalOf(request).tenantId),
    );
  };
}
