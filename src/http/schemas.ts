import type { FastifySchema } from 'fastify';
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

import { FieldErrorSchema } from '../validation/item-errors.ts';
import { REQUEST_ID_RULE } from './request-id.ts';

/** RFC 7807 problem (docs/reference.md §2), the error body of every ingestion and catalog operation. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path' }),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { additionalProperties: false, title: 'Problem' },
);

/**
 * Response headers the OpenAPI document names, each described once. Documentation only: Fastify
 * neither validates nor serializes response headers.
 */
export const AuthChallengeHeaders = {
  'WWW-Authenticate': Type.String({
    description: '`Bearer`, with `error="invalid_token"` when a token was sent',
  }),
};
export const RetryAfterHeaders = {
  'Retry-After': Type.Integer({ minimum: 1, description: 'Seconds to wait before trying again' }),
};
export const RateLimitHeaders = {
  'RateLimit-Limit': Type.Integer({ description: 'Submissions the tenant may make per minute' }),
  'RateLimit-Remaining': Type.Integer({ description: 'Submissions left in the current minute' }),
  'RateLimit-Reset': Type.Integer({ description: 'Seconds until the current minute ends' }),
};
const RequestIdHeaders = {
  'X-Request-Id': Type.String({
    description: 'The request’s id: the one the caller sent, when usable, else a new one',
  }),
};
const RequestIdParameter = Type.Object({
  'X-Request-Id': Type.Optional(
    Type.String({
      minLength: 1,
      ...REQUEST_ID_RULE,
      description: 'Echoed in the response’s X-Request-Id; any other value is replaced by a new id',
    }),
  ),
});

/**
 * A response as the route serializes it (`schema`, unchanged) and as the OpenAPI document shows it
 * (`description`, `headers`). @fastify/swagger reads the two extra keys; fast-json-stringify ignores
 * them, so what is sent does not change.
 */
export function documented<T extends TSchema>(
  description: string,
  schema: T,
  headers?: Record<string, TSchema>,
): T {
  return { ...schema, 'x-response-description': description, ...(headers ? { headers } : {}) };
}

const problem = (description: string, headers?: Record<string, TSchema>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** What an error status means, for the document; the analysis route shares the texts it can. */
export const ERROR_DESCRIPTIONS = {
  400: 'Validation error or malformed JSON',
  401: 'Missing or invalid bearer token',
  403: 'Token without a tenant or without the required scope',
  404: 'Not found: an unknown or malformed id, or another tenant’s',
  406: 'The Accept header names no media type this operation answers with (not-acceptable)',
  409: 'Conflicts with the resource’s current state',
  413: 'Body too large',
  415: 'Body is not uncompressed application/json in UTF-8',
  422: 'Idempotency-Key already used with a different body (idempotency-key-mismatch)',
  429: 'Tenant rate or backlog limit reached',
} as const;

/** Documented error responses of a problem+json route, for its `response` schema. */
export function problemResponses(...statuses: Array<keyof typeof ERROR_DESCRIPTIONS>) {
  const headers: Partial<Record<number, Record<string, TSchema>>> = {
    401: AuthChallengeHeaders,
    429: { ...RetryAfterHeaders, ...RateLimitHeaders },
  };
  const out: Record<string, unknown> = { default: problem('Unexpected error') };
  for (const status of statuses) out[String(status)] = problem(ERROR_DESCRIPTIONS[status], headers[status]);
  return out;
}

/** How a route is described: its OpenAPI tags and summary, and what it answers with 200. */
export interface RouteDoc<T extends TSchema> {
  tags: string[];
  summary: string;
  description: string;
  answer: T;
}

/**
 * The schema of a read: one resource by path id (`params`; 404 for an unknown id or another
 * tenant's) or one page of a list (`querystring`; 400 for a bad `limit`, `cursor` or filter).
 */
export function readSchema<T extends TSchema>(
  input: { params: TSchema } | { querystring: TSchema },
  doc: RouteDoc<T>,
) {
  const errors = 'params' in input ? problemResponses(401, 403, 404) : problemResponses(400, 401, 403);
  return {
    tags: doc.tags,
    summary: doc.summary,
    ...input,
    response: { 200: documented(doc.description, doc.answer), ...errors },
  };
}

/** A response without a body (204, 202), with what it means for the document. */
export const NoContent = (description: string) => documented(description, Type.Null());

/**
 * The schema of a delete by path id: 204 without a body, 404 for an unknown id or another tenant's,
 * and the other statuses the delete may answer (`also`, e.g. 409 when the resource's state forbids it).
 */
export function deleteSchema(
  params: TSchema,
  doc: { tags: string[]; summary: string },
  ...also: Array<keyof typeof ERROR_DESCRIPTIONS>
) {
  return {
    tags: doc.tags,
    summary: doc.summary,
    params,
    response: { 204: NoContent('Deleted'), ...problemResponses(401, 403, 404, ...also) },
  };
}

/**
 * The OpenAPI view of a route's schema with what every operation shares (docs/reference.md §2): each
 * response carries `X-Request-Id`, and a request may send one. For @fastify/swagger's `transform`:
 * it builds new objects, so the schemas the route validates and serializes with stay as they are.
 */
export function withRequestId(schema: FastifySchema): FastifySchema {
  // The transform also sees routes registered without any schema; they document nothing to add to.
  if (!schema) return schema;
  const requestHeaders = schema.headers as { properties?: TProperties } | undefined;
  const responses = schema.response as Record<string, { headers?: object }> | undefined;
  return {
    ...schema,
    // Added to the route's own header schema, so what it requires (`required`) stays required.
    headers: requestHeaders
      ? { ...requestHeaders, properties: { ...requestHeaders.properties, ...RequestIdParameter.properties } }
      : RequestIdParameter,
    ...(responses && {
      response: Object.fromEntries(
        Object.entries(responses).map(([status, response]) => [
          status,
          { ...response, headers: { ...response.headers, ...RequestIdHeaders } },
        ]),
      ),
    }),
  };
}
