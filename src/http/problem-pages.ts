import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { PROBLEMS, NotFoundError, type ProblemSlug } from '../errors/app-errors.ts';
import { FurnitureEnum } from '../catalog/product-schema.ts';
import { ENUMERATIONS_PAGE } from '../validation/field-errors.ts';

const EXPLANATIONS: Record<ProblemSlug, string> = {
  'validation-error':
    'Some fields or query parameters are wrong. Each entry of errors[] names one (field), says what is wrong (code) and how (message). Without errors[], the request itself could not be read: it is not well-formed HTTP (400), or it was not received completely in time (408). A value outside an enumeration is refused; the values of the catalog’s enumerations are listed below.',
  'malformed-json': 'The body is not valid JSON. Send a JSON document with Content-Type: application/json.',
  unauthorized:
    'No valid bearer token was sent. Send Authorization: Bearer <JWT>, signed with a key this service accepts and not expired.',
  forbidden:
    'The token is valid but does not allow this operation: it names no tenant, or lacks the scope the operation needs.',
  'not-found': 'There is no such resource for your tenant. Ids of other tenants are answered the same way.',
  'method-not-allowed':
    'The path exists but does not serve this method. The Allow header lists the methods it serves (HEAD wherever GET is); GET /openapi.json describes every operation.',
  'not-acceptable':
    'The Accept header names no media type this operation answers with. The catalog export (GET /products/export) is NDJSON, application/x-ndjson, also sent for no Accept, */* or application/json; the detail lists the types available. Send one of those, or no Accept header.',
  conflict:
    'The request cannot be applied to the resource as it is now: a limit is reached (at most 10 webhook endpoints per tenant), or it would remove the last of something (delete the product instead of its last variant).',
  'payload-too-large':
    'The request is larger than this operation accepts. A body over the limit answers 413: split the batch (at most 1000 items). Header fields over the server limit (16 KiB) answer 431: send fewer or shorter headers.',
  'unsupported-media-type': 'Request bodies must be JSON: send Content-Type: application/json.',
  'idempotency-key-mismatch':
    'This Idempotency-Key was already used, within the last 24 hours, with a different request body. Send the same body to get the first answer again, or use a new key for a new submission.',
  'rate-limited':
    'Your tenant sent too many submissions, or has too many items waiting. Retry after the number of seconds in Retry-After.',
  'internal-error':
    'Something failed on our side (status 500), or a service we depend on is unavailable for now (status 503, with Retry-After). Retry later; if it persists, report the X-Request-Id of the response.',
};

const escape = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The catalog's enumerations, every value, one section each whose id is the enumeration's name:
 * the page an error about a long enumeration points at (`enumerationLink`), read from the same
 * schemas the validator checks with.
 */
function enumerationsSection(): string {
  const sections = Object.values(FurnitureEnum).map((make) => {
    const { title, enum: values } = make() as unknown as { title: string; enum: string[] };
    const items = values.map((value) => `<li><code>${escape(JSON.stringify(value))}</code></li>`).join('');
    return `<h3 id="${escape(title)}">${escape(title)}</h3><p>${values.length} values, exact and case-sensitive:</p><ul>${items}</ul>`;
  });
  return `<h2>Enumerations</h2>${sections.join('\n')}`;
}

/** What a page adds below its explanation: the validation-error page lists the enumerations. */
const EXTRA: Partial<Record<string, string>> = { [ENUMERATIONS_PAGE]: enumerationsSection() };

/** Serves `GET /problems/<slug>`: the human-readable page each problem `type` points at. */
export async function problemPages(app: FastifyInstance): Promise<void> {
  app.get(
    '/problems/:slug',
    {
      schema: {
        hide: true,
        params: Type.Object({ slug: Type.String() }),
      },
    },
    async (request, reply) => {
      const { slug } = request.params as { slug: string };
      if (!Object.hasOwn(PROBLEMS, slug)) throw new NotFoundError('No such problem type.');
      const problem = PROBLEMS[slug as ProblemSlug];
      const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(problem.title)}</title></head>
<body><h1>${problem.status} ${escape(problem.title)}</h1><p>${escape(EXPLANATIONS[slug as ProblemSlug])}</p>
${EXTRA[`/problems/${slug}`] ?? ''}</body></html>\n`;
      return reply.type('text/html; charset=utf-8').send(html);
    },
  );
}
