import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { principalOf, type Authorize } from '../http/authorize.ts';
import { SCOPES } from '../auth/verify-token.ts';
import { problemResponses } from '../http/schemas.ts';
import { FullProductIngest } from '../catalog/product-schema.ts';
import type { ExportService } from './export.service.ts';
import { NotAcceptableError } from '../errors/app-errors.ts';
import { acceptQuality } from '../http/media-type.ts';
import { EXPORT_FORMATS, XLSX_TYPE, type ExportFormat } from './export-formats.ts';
import { NDJSON_TYPE } from './ndjson-writer.ts';
import { withFirstChunkMade } from './first-chunk-made.ts';

const ExportQuery = Type.Object(
  {
    prefix: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'Only the products whose external_id starts with this (case-sensitive)',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Bytes the response's stream holds before it stops reading pages: the next page is read only once
 * the socket has taken the one before, so memory stays flat however large the catalog.
 */
const STREAM_HIGH_WATER_MARK = 64 * 1024;

const qualityOf = (accept: string | undefined, format: ExportFormat) =>
  Math.max(...[format.mediaType, ...format.alsoFor].map((type) => acceptQuality(accept, type)));

/**
 * The form `accept` prefers (RFC 9110 §12.5.1: the highest quality, the earlier form on a tie).
 * Throws `not-acceptable`, naming every form, when it accepts none of them.
 */
export function chooseExportFormat(accept: string | undefined): ExportFormat {
  let best: ExportFormat | null = null;
  let bestQuality = 0;
  for (const format of EXPORT_FORMATS) {
    const quality = qualityOf(accept, format);
    if (quality > bestQuality) {
      best = format;
      bestQuality = quality;
    }
  }
  if (best) return best;
  const forms = EXPORT_FORMATS.map((format) =>
    format.alsoFor.length > 0
      ? `${format.mediaType} (also for ${format.alsoFor.join(', ')})`
      : format.mediaType,
  );
  throw new NotAcceptableError(
    `The export is available as ${forms.slice(0, -1).join(', ')} or ${forms.at(-1)!}; the Accept header allows none of them.`,
  );
}

/** `GET /products/export` (docs/reference.md §11.4): the catalog as a file, streamed. */
export async function exportRoutes(
  app: FastifyInstance,
  { exports, authorize }: { exports: ExportService; authorize: Authorize },
): Promise<void> {
  app.get<{ Querystring: Static<typeof ExportQuery> }>(
    '/products/export',
    {
      onRequest: authorize(SCOPES.catalogRead),
      schema: {
        tags: ['catalog'],
        summary: 'Export the stored products as a file of items (NDJSON, CSV or XLSX), by external_id',
        description:
          'NDJSON: one product per line in the ingest shape (no timestamps; `angle` only when one is ' +
          'stored), so the file can be ingested again; a variant with more than 10 stored images ' +
          `continues on further lines of its product. Sent for \`Accept: ${NDJSON_TYPE}\`, ` +
          '`application/json`, `*/*` or no Accept. `text/csv` and XLSX send the spreadsheet layout ' +
          '(a row per variant, docs/spreadsheets.md); XLSX answers 422 when a text is longer than a cell holds.',
        querystring: ExportQuery,
        response: {
          200: {
            description: 'The products: one item per line (NDJSON), or a row per variant (CSV, XLSX)',
            content: {
              [NDJSON_TYPE]: { schema: FullProductIngest },
              'text/csv': { schema: Type.String() },
              [XLSX_TYPE]: { schema: Type.String({ format: 'binary' }) },
            },
          },
          ...problemResponses(400, 401, 403, 406, 422),
        },
      },
    },
    async (request, reply) => {
      reply.header('vary', 'accept');
      const format = chooseExportFormat(request.headers.accept);
      const pages = await exports.open(principalOf(request).tenantId, {
        prefix: request.query.prefix,
        maxTextLength: format.maxTextLength,
      });
      const chunks = await withFirstChunkMade(format.write(pages));
      return reply
        .type(format.contentType)
        .header('content-disposition', `attachment; filename="products.${format.fileExtension}"`)
        .send(Readable.from(chunks, { objectMode: false, highWaterMark: STREAM_HIGH_WATER_MARK }));
    },
  );
}
