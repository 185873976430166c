import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { principalOf, type Authorize } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { ValidationError } from '../errors/app-errors.ts';
import type { FieldError } from '../validation/item-errors.ts';
import { documented, problemResponses, RateLimitHeaders, readSchema } from '../http/schemas.ts';
import { rateLimitHeaders } from '../http/error-headers.ts';
import { envelopeErrorsFromAjv, fieldErrorsFromAjv } from '../validation/field-errors.ts';
import type { IngestionService } from './ingestion.service.ts';
import type { ErrorReports } from './error-reports.service.ts';
import { sendErrorsCsv, wantsCsv } from './error-reports.routes.ts';
import { ErrorsCsvSchema } from './error-reports.schemas.ts';
import type { Admission } from './rate-limiter.ts';
import {
  BatchErrorPage,
  BatchListQuery,
  BatchPage,
  BatchParams,
  BatchStatusRecord,
  ErrorsQuery,
  IdempotencyKeyHeaders,
  IdempotentReplayedHeader,
  IngestionAccepted,
  IngestionEnvelope,
  IngestionRequest,
  LocationHeader,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  SubmissionQuery,
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

/** What the ingestion routes are served from. */
interface IngestionRouteDeps {
  ingestion: IngestionService;
  errorReports: ErrorReports;
  authorize: Authorize;
  maxBodyBytes: number;
}

const tags = ['ingestion'];

/** Operations 1–3 of the spec, plus the tenant's batch list (docs/reference.md §9). Thin: parse, call, reply. */
export async function ingestionRoutes(app: FastifyInstance, deps: IngestionRouteDeps): Promise<void> {
  const { ingestion, authorize } = deps;
  app.decorateRequest('admission', null);
  submissionRoute(app, deps);

  app.get<{ Querystring: Static<typeof BatchListQuery> }>(
    '/products/ingestions',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: readSchema(
        { querystring: BatchListQuery },
        {
          tags,
          summary: 'List the tenant’s batches, newest first',
          description: 'A page of the tenant’s batches, newest first',
          answer: BatchPage,
        },
      ),
    },
    async (request) => {
      const { limit = 20, cursor, status, label } = request.query;
      return ingestion.listBatches(principalOf(request).tenantId, { limit, cursor, status, label });
    },
  );

  app.get<{ Params: Static<typeof BatchParams> }>(
    '/products/ingestions/:batch_id',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: readSchema(
        { params: BatchParams },
        {
          tags,
          summary: 'Get batch status and progress',
          description: 'Status record',
          answer: BatchStatusRecord,
        },
      ),
    },
    async (request) => ingestion.getStatus(principalOf(request).tenantId, request.params.batch_id),
  );

  batchErrorsRoute(app, deps);
}

/** `POST /products/ingestions`: admitted before its body is read, stored as the bytes sent. */
function submissionRoute(
  app: FastifyInstance,
  { ingestion, authorize, maxBodyBytes }: IngestionRouteDeps,
): void {
  app.post<{
    Body: Static<typeof IngestionEnvelope>;
    Headers: { 'idempotency-key'?: string };
    Querystring: Static<typeof SubmissionQuery>;
  }>(
    '/products/ingestions',
    {
      bodyLimit: maxBodyBytes,
      config: { openapiBody: IngestionRequest, bodyOutline: true },
      schemaErrorFormatter: (errors, part) =>
        new ValidationError(
          part === 'headers'
            ? idempotencyKeyErrors()
            : part === 'querystring'
              ? fieldErrorsFromAjv(errors)
              : envelopeErrorsFromAjv(errors),
        ),
      // Authenticate, then admit against the tenant's limits, both before the body is read.
      onRequest: [
        authorize(SCOPES.ingestionsWrite),
        async (request, reply) => {
          request.admission = await ingestion.admit(principalOf(request).tenantId);
          reply.headers(rateLimitHeaders(request.admission.quota));
        },
      ],
      schema: {
        tags,
        summary: 'Queue a batch of products',
        body: IngestionEnvelope,
        querystring: SubmissionQuery,
        headers: IdempotencyKeyHeaders,
        response: {
          202: documented('Batch stored; processing continues asynchronously', IngestionAccepted, {
            ...LocationHeader,
            ...RateLimitHeaders,
            ...IdempotentReplayedHeader,
          }),
          ...problemResponses(400, 401, 403, 413, 415, 422, 429),
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
      const { accepted, replayed } = await ingestion.submit(tenantId, {
        receivedCount: request.body.items.length,
        body,
        admission,
        idempotencyKey: request.headers['idempotency-key'],
        label: request.query.label,
      });
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(202).header('location', `/products/ingestions/${accepted.batch_id}`).send(accepted);
    },
  );
}

/** `GET /products/ingestions/:batch_id/errors`: a page of failed items, or all their errors as CSV. */
function batchErrorsRoute(
  app: FastifyInstance,
  { ingestion, errorReports, authorize }: IngestionRouteDeps,
): void {
  app.get<{ Params: Static<typeof BatchParams>; Querystring: Static<typeof ErrorsQuery> }>(
    '/products/ingestions/:batch_id/errors',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: {
        tags,
        summary: 'Get the per-item errors of a batch',
        description:
          'JSON by default: a page of failed items. With an Accept that ranks text/csv above application/json, ' +
          'every error of every failed item as one streamed CSV, the query ignored.',
        params: BatchParams,
        querystring: ErrorsQuery,
        response: {
          200: {
            description: 'A page of failed items, by ascending index; or all their errors as CSV',
            content: {
              'application/json': { schema: BatchErrorPage },
              'text/csv': { schema: ErrorsCsvSchema },
            },
          },
          ...problemResponses(400, 401, 403, 404),
        },
      },
      // The id is resolved before the query is judged (below).
      attachValidation: true,
    },
    async (request, reply) => {
      const { tenantId } = principalOf(request);
      // The CSV holds every error, so it has no use for `limit` and `cursor`: the query is ignored.
      if (wantsCsv(request.headers.accept)) {
        return sendErrorsCsv(reply, errorReports, tenantId, request.params.batch_id);
      }
      if (request.validationError) {
        // An id that names none of the caller's batches is 404 whatever the query (docs/reference.md §2:
        // never 400), so a bad query cannot tell another tenant's id from an unknown one.
        await ingestion.getStatus(tenantId, request.params.batch_id);
        throw request.validationError;
      }
      const { limit = 500, cursor } = request.query;
      return ingestion.listErrors(tenantId, request.params.batch_id, { limit, cursor });
    },
  );
}

/**
 * A malformed `Idempotency-Key` is named as sent on the wire (docs/reference.md §10.2): the only header this
 * route validates, so any header error is about it.
 */
const idempotencyKeyErrors = (): FieldError[] => [
  {
    field: 'Idempotency-Key',
    code: 'invalid_format',
    message: `Idempotency-Key must be 1–${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (no spaces or control characters).`,
  },
];
