import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { PROBLEMS, type ProblemSlug } from '../errors/app-errors.ts';
import type { FieldError } from '../validation/item-errors.ts';
import type { ProblemSchema } from './schemas.ts';

/** The RFC 7807 body of every error of the ingestion and catalog operations (spec: Problem). */
export type Problem = Static<typeof ProblemSchema>;

/**
 * The path of a request target, without its query. A target in absolute form
 * (`GET http://host/path`, which HTTP/1.1 servers must accept) gives its path, so the host a
 * client wrote is never echoed back.
 */
export function pathOfTarget(target: string): string {
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
  const end = path.search(/[?#]/);
  return (end === -1 ? path : path.slice(0, end)) || '/';
}

/** The request's path without its query: the problem's `instance`. */
export function instanceOf(request: FastifyRequest): string {
  return pathOfTarget(request.raw.url ?? request.url);
}

/** Builds the problem body for `slug`; `type` is absolute under `publicBaseUrl`. */
export function problemBody(
  publicBaseUrl: string,
  slug: ProblemSlug,
  detail: string,
  instance: string,
  errors?: FieldError[],
): Problem {
  const { status, title } = PROBLEMS[slug];
  const body: Problem = { type: `${publicBaseUrl}/problems/${slug}`, title, status, detail, instance };
  if (errors) body.errors = errors;
  return body;
}

/** Sends `problem` as `application/problem+json`. */
export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type('application/problem+json').send(problem);
}
