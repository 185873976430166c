import type { FastifyInstance } from 'fastify';
import { principalOf, type Authorize } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { ValidationError } from '../errors/app-errors.ts';
import { rateLimitHeaders } from '../http/error-headers.ts';
import { documented, problemResponses, RateLimitHeaders } from '../http/schemas.ts';
import { envelopeErrorsFromAjv } from '../validation/field-errors.ts';
import { IngestionEnvelope, IngestionRequest } from './ingestion.schemas.ts';
import { PreviewResponse } from './preview.schemas.ts';
import type { PreviewService } from './preview.service.ts';

/** `POST /products/ingestions/preview` (docs/reference.md §10.3): a submission's body, judged and diffed, nothing stored. */
export async function previewRoutes(
  app: FastifyInstance,
  {
    preview,
    authorize,
    maxBodyBytes,
  }: { preview: PreviewService; authorize: Authorize; maxBodyBytes: number },
): Promise<void> {
  app.post(
    '/products/ingestions/preview',
    {
      // The body, its limits and its 400s are the submission's (docs/reference.md §4): the same envelope, read the same way.
      bodyLimit: maxBodyBytes,
      config: { openapiBody: IngestionRequest, bodyOutline: true },
      schemaErrorFormatter: (errors) => new ValidationError(envelopeErrorsFromAjv(errors)),
      onRequest: [
        authorize(SCOPES.ingestionsWrite),
        async (request, reply) => {
          reply.headers(rateLimitHeaders((await preview.admit(principalOf(request).tenantId)).quota));
        },
      ],
      schema: {
        tags: ['ingestion'],
        summary: 'Preview a batch: what each item would do to the catalog as stored now; nothing is stored',
        body: IngestionEnvelope,
        response: {
          200: documented('Each item’s action, changes and errors', PreviewResponse, RateLimitHeaders),
          ...problemResponses(400, 401, 403, 413, 415, 429),
        },
      },
    },
    async (request) => {
      const body = request.rawJson?.bytes;
      if (!body) throw new Error('the JSON body parser kept no bytes for a bodyOutline route');
      return preview.preview(principalOf(request).tenantId, body);
    },
  );
}
