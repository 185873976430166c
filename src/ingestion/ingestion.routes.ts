import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { Authorize } from '../auth/authorize.ts';
import { principalOf } from '../auth/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { ValidationError } from '../http/errors.ts';
import { documented, problemResponses, RateLimitHeaders } from '../http/schemas.ts';
import { envelopeErrorsFromAjv } from '../validation/field-errors.ts';
import type { IngestionService } from './ingestion.service.ts';
import type { Admission } from './rate-limiter.ts';
import {
  BatchErrorPage,
  BatchListQuery,
  BatchPage,
  BatchParams,
  BatchStatusRecord,
  ErrorsQuery,
  IngestionAccepted,
  IngestionEnvelope,
  IngestionRequest,
  LocationHeader,
} from './ingestion.schemas.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The body schema the OpenAPI document shows, where it differs from what the route validates. */
    openapiBody?: unknown;
  }
  interface FastifyRequest {
    /** A submission's admission against its tenant's limits, made before the body was read. */
    admission: Admission | null;
  }
}

/** Operations 1–3 of the spec, plus the tenant's batch list (CONTRACT §9). Thin: parse, call, reply. */
export async function ingestionRoutes(
  app: FastifyInstance,
  {
    ingestion,
    authorize,
    maxBodyBytes,
  }: { ingestion: IngestionService; authorize: Authorize; maxBodyBytes: number },
): Promise<void> {
  const tags = ['ingestion'];
  app.decorateRequest('admission', null);

  app.post<{ Body: Static<typeof IngestionEnvelope> }>(
    '/products/ingestions',
    {
      bodyLimit: maxBodyBytes,
      config: { openapiBody: IngestionRequest, bodyOutline: true },
      schemaErrorFormatter: (errors) => new ValidationError(envelopeErrorsFromAjv(errors)),
      // Authenticate, then admit against the tenant's limits, both before the body is read.
      onRequest: [
        authorize(SCOPES.ingestionsWrite),
        async (request, reply) => {
          request.admission = await ingestion.admit(principalOf(request).tenantId);
          reply.headers(request.admission.headers);
        },
      ],
      schema: {
        tags,
        summary: 'Queue a batch of products',
        body: IngestionEnvelope,
        response: {
          202: documented('Batch stored; processing continues asynchronously', IngestionAccepted, {
            ...LocationHeader,
            ...RateLimitHeaders,
          }),
          ...problemResponses(400, 401, 403, 413, 415, 429),
        },
      },
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      // The body was validated from its outline (its items are judged later, by the worker) and is
      // stored as the bytes that were sent. `request.body` is only the outline: never store that.
      const body = request.rawJson?.bytes;
      if (!body) throw new Error('the JSON body parser kept no bytes for a bodyOutline route');
      const { admission } = request;
      if (!admission) throw new Error('a submission reached its handler without an admission');
      const accepted = await ingestion.submit(tenantId, {
        receivedCount: request.body.items.length,
        body,
        admission,
      });
      return reply.code(202).header('location', `/products/ingestions/${accepted.batch_id}`).send(accepted);
    },
  );

  app.get<{ Querystring: Static<typeof BatchListQuery> }>(
    '/products/ingestions',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: {
        tags,
        summary: 'List the tenant’s batches, newest first',
        querystring: BatchListQuery,
        response: {
          200: documented('A page of the tenant’s batches, newest first', BatchPage),
          ...problemResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { limit = 20, cursor, status } = request.query;
      return ingestion.listBatches(principalOf(request).tenantId, { limit, cursor, status });
    },
  );

  app.get<{ Params: Static<typeof BatchParams> }>(
    '/products/ingestions/:batch_id',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: {
        tags,
        summary: 'Get batch status and progress',
        params: BatchParams,
        response: {
          200: documented('Status record', BatchStatusRecord),
          ...problemResponses(401, 403, 404),
        },
      },
    },
    async (request) => ingestion.getStatus(principalOf(request).tenantId, request.params.batch_id),
  );

  app.get<{ Params: Static<typeof BatchParams>; Querystring: Static<typeof ErrorsQuery> }>(
    '/products/ingestions/:batch_id/errors',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: {
        tags,
        summary: 'Get the per-item errors of a batch',
        params: BatchParams,
        querystring: ErrorsQuery,
        response: {
          200: documented('A page of failed items, by ascending index', BatchErrorPage),
          ...problemResponses(400, 401, 403, 404),
        },
      },
      // The id is resolved before the query is judged (below).
      attachValidation: true,
    },
    async (request) => {
      const { tenantId } = principalOf(request);
      if (request.validationError) {
        // An id that names none of the caller's batches is 404 whatever the query (CONTRACT §2:
        // never 400), so a bad query cannot tell another tenant's id from an unknown one.
        await ingestion.getStatus(tenantId, request.params.batch_id);
        throw request.validationError;
      }
      const { limit = 500, cursor } = request.query;
      return ingestion.listErrors(tenantId, request.params.batch_id, { limit, cursor });
    },
  );
}
