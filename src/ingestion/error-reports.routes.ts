import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { principalOf, type Authorize } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { prefersMediaType } from '../http/media-type.ts';
import { readSchema } from '../http/schemas.ts';
import type { ErrorReports } from './error-reports.service.ts';
import { ErrorSummarySchema } from './error-reports.schemas.ts';
import { errorsCsv } from './errors-csv.ts';
import { BatchParams } from './ingestion.schemas.ts';

/** The media type of the errors CSV. */
export const CSV_TYPE = 'text/csv; charset=utf-8';

/**
 * Whether an errors request asks for CSV: its `Accept` ranks `text/csv` above `application/json`.
 * JSON stays the default: no `Accept`, `*\/*`, or both types at the same weight give JSON.
 */
export const wantsCsv = (accept: string | undefined) =>
  prefersMediaType(accept, 'text/csv', 'application/json');

/**
 * Streams every error of a batch as CSV. The batch is looked up first, so an unknown id is still a
 * 404 problem; then each page of failed items is read as the reply takes the previous one.
 */
export async function sendErrorsCsv(
  reply: FastifyReply,
  reports: ErrorReports,
  tenantId: string,
  batchId: string,
): Promise<FastifyReply> {
  const pages = await reports.walkErrors(tenantId, batchId);
  return reply
    .type(CSV_TYPE)
    .header('content-disposition', `attachment; filename="batch-${batchId}-errors.csv"`)
    .send(Readable.from(errorsCsv(pages)));
}

/** `GET /products/ingestions/{batch_id}/errors/summary` (docs/reference.md §10.4). */
export async function errorReportRoutes(
  app: FastifyInstance,
  { errorReports, authorize }: { errorReports: ErrorReports; authorize: Authorize },
): Promise<void> {
  app.get<{ Params: Static<typeof BatchParams> }>(
    '/products/ingestions/:batch_id/errors/summary',
    {
      onRequest: authorize(SCOPES.ingestionsRead),
      schema: readSchema(
        { params: BatchParams },
        {
          tags: ['ingestion'],
          summary: 'Sum up the errors of a batch by code',
          description: 'The batch’s errors by code, most frequent first',
          answer: ErrorSummarySchema,
        },
      ),
    },
    async (request) => errorReports.summarize(principalOf(request).tenantId, request.params.batch_id),
  );
}
