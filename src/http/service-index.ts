import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import { documented } from './schemas.ts';
import { namesMediaType } from './media-type.ts';

/** Where the service's pages for people and programs are, as `GET /` names them (docs/api.md). */
export const SERVICE_LINKS = { ui: '/ui', docs: '/docs', openapi: '/openapi.json' } as const;

const ServiceLinks = Type.Object(
  {
    ui: Type.String({ description: 'The dashboard, for a browser: `/ui`' }),
    docs: Type.String({ description: 'The interactive API reference (Swagger UI): `/docs`' }),
    openapi: Type.String({ description: 'The OpenAPI 3.1 document: `/openapi.json`' }),
  },
  { additionalProperties: false, title: 'ServiceLinks' },
);

/**
 * `GET /` (and HEAD), without a token: a browser, whose `Accept` names `text/html`, is sent on to the
 * dashboard; any other client (curl's `*\/*`, a script's `application/json`, no `Accept`) gets the
 * links as JSON, so that neither lands on a 404. `text/html` must be named, with a weight above 0:
 * `*\/*` alone says nothing about wanting a page.
 */
export async function serviceIndex(app: FastifyInstance): Promise<void> {
  app.get(
    '/',
    {
      schema: {
        tags: ['operations'],
        summary: 'Links to the dashboard, the API reference and the OpenAPI document',
        description:
          'Needs no token. A client whose `Accept` names `text/html` (a browser) is redirected to the dashboard; ' +
          'any other (no `Accept`, `*/*`, `application/json`) gets the links, each a path on this service. ' +
          'HEAD answers the same without a body.',
        security: [],
        response: {
          200: documented('For a client whose Accept does not name text/html: the links', ServiceLinks),
          302: documented(
            'For a client whose Accept names text/html (a browser): to the dashboard',
            Type.Null(),
            {
              Location: Type.String({ format: 'uri-reference', description: '/ui' }),
            },
          ),
        },
      },
    },
    async (request, reply) => {
      // The answer depends on Accept: a cache must not give a browser the JSON, or curl the redirect.
      reply.header('vary', 'Accept');
      if (namesMediaType(request.headers.accept, 'text/html')) return reply.redirect(SERVICE_LINKS.ui, 302);
      return reply.header('cache-control', 'no-cache').send(SERVICE_LINKS);
    },
  );
}
