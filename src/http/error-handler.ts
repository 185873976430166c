import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  AppError,
  MethodNotAllowedError,
  NotFoundError,
  ValidationError,
  type ProblemSlug,
} from '../errors/app-errors.ts';
import { instanceOf, problemBody, sendProblem } from './problem.ts';
import { errorHeaders } from './error-headers.ts';
import { trackAllowedMethods } from './method-not-allowed.ts';
import { fieldErrorsFromAjv, type AjvLikeError } from '../validation/field-errors.ts';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailableReason } from '../db/database-unavailable.ts';

/** How a route renders its errors: problem+json (default) or the analysis shape of docs/reference.md §8. */
export type ErrorShape = 'problem' | 'analysis';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorShape?: ErrorShape;
  }
}

/** The spec's fixed texts for the stageability operation. */
export const ANALYSIS_MESSAGES = {
  badRequest: 'No images provided or more than 10 images',
  unauthorized: 'Unauthorized - Invalid or missing authentication token',
} as const;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const MIB = 1024 * 1024;
const KIB = 1024;

/** A byte count as people read it: `64 MiB (67108864 bytes)`. */
function byteSize(bytes: number): string {
  const rounded = bytes % MIB === 0 ? `${bytes / MIB} MiB` : bytes % KIB === 0 ? `${bytes / KIB} KiB` : null;
  return rounded === null ? `${bytes} bytes` : `${rounded} (${bytes} bytes)`;
}

/**
 * Turns anything thrown while handling a request into an {@link AppError}; unknown errors are 500s.
 * `bodyLimit` is the route's, which a 413 names (docs/reference.md §11.8).
 */
export function toAppError(error: FastifyError | AppError | Error, bodyLimit?: number): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError & { validation?: AjvLikeError[]; validationContext?: string };
  if (fastifyError.validation) {
    return new ValidationError(fieldErrorsFromAjv(fastifyError.validation));
  }
  const byCode: Partial<Record<string, [ProblemSlug, string]>> = {
    FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported-media-type', 'The request body must be application/json.'],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['malformed-json', 'The Content-Length does not match the body.'],
    FST_ERR_CTP_BODY_TOO_LARGE: [
      'payload-too-large',
      'The request body is larger than this operation accepts.',
    ],
    FST_ERR_CTP_EMPTY_JSON_BODY: ['malformed-json', 'The request body is empty.'],
    FST_ERR_CTP_INVALID_JSON_BODY: ['malformed-json', 'The request body is not valid JSON.'],
  };
  if (fastifyError.code === 'FST_ERR_CTP_BODY_TOO_LARGE' && bodyLimit !== undefined) {
    return new AppError(
      'payload-too-large',
      `The request body is larger than this operation accepts: at most ${byteSize(bodyLimit)}.`,
    );
  }
  const known = fastifyError.code ? byCode[fastifyError.code] : undefined;
  if (known) return new AppError(known[0], known[1]);
  if (fastifyError.statusCode === 413) {
    return new AppError('payload-too-large', 'The request body is too large.');
  }
  if (fastifyError.statusCode === 415) {
    return new AppError('unsupported-media-type', 'Unsupported media type.');
  }
  // Any other request the framework could not read is the caller's to fix, not a server error.
  if (fastifyError.code?.startsWith('FST_') && (fastifyError.statusCode ?? 500) < 500) {
    return new AppError('validation-error', 'The request could not be read.');
  }
  if (databaseUnavailableReason(error) !== null) {
    // Read-only, full, restarting or unreachable: nothing was stored, and a retry will do.
    return new AppError('internal-error', 'The database cannot take this request now; retry later.', {
      status: 503,
      retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
    });
  }
  return new AppError('internal-error', 'The request could not be completed; it has been logged.');
}

function sendAnalysisError(reply: FastifyReply, error: AppError): FastifyReply {
  const status = error.status;
  let message: string = error.detail;
  // The spec gives this operation one 400 text, whatever made the body unusable.
  if (error.slug === 'validation-error' || error.slug === 'malformed-json')
    message = ANALYSIS_MESSAGES.badRequest;
  if (error.slug === 'unauthorized') message = ANALYSIS_MESSAGES.unauthorized;
  return reply
    .code(status)
    .type('application/json; charset=utf-8')
    .send({ statusCode: status, message, error: REASONS[status] ?? 'Error' });
}

/**
 * Renders errors the router raises before any route or hook runs (an undecodable URL, a path
 * parameter over `maxParamLength`): such a path names nothing that exists, so it is a 404.
 */
export function frameworkErrorHandler(publicBaseUrl: string) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const known = error.code === 'FST_ERR_BAD_URL' || error.code === 'FST_ERR_MAX_PARAM_LENGTH';
    const appError = known ? new NotFoundError('No such resource.') : toAppError(error);
    void reply
      .header('x-request-id', request.id)
      .code(appError.status)
      .type('application/problem+json')
      .send(problemBody(publicBaseUrl, appError.slug, appError.detail, instanceOf(request)));
  };
}

/** Installs the one place where errors become responses; 5xx details stay in the log. */
export function registerErrorHandler(app: FastifyInstance, publicBaseUrl: string): void {
  const render = (request: FastifyRequest, reply: FastifyReply, error: AppError) => {
    reply.headers(errorHeaders(error));
    if (request.routeOptions.config?.errorShape === 'analysis') return sendAnalysisError(reply, error);
    const body = problemBody(publicBaseUrl, error.slug, error.detail, instanceOf(request), error.errors);
    // The response's status, where it is not the slug's own (503 for an unavailable key set).
    return sendProblem(reply, { ...body, status: error.status });
  };

  // A path some route serves, asked with another method, is a 405; no route means a 404. Either
  // is answered before any route's token check, and whatever the body: a request no route takes
  // is not read (its body's errors are not reported).
  const allowedMethods = trackAllowedMethods(app);
  const answerNoRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = instanceOf(request);
    const allow = allowedMethods(path);
    // A route that takes this method and finds nothing (a missing static file) is a 404 too.
    if (allow.length === 0 || allow.includes(request.method)) {
      return render(request, reply, new AppError('not-found', `No route for ${request.method} ${path}.`));
    }
    const error = new MethodNotAllowedError(request.method, path, allow);
    // The analyzer's routes answer in their own shape (docs/reference.md §8), their 405 too.
    if (path === '/analysis' || path.startsWith('/analysis/')) {
      return sendAnalysisError(reply.headers(errorHeaders(error)), error);
    }
    return render(request, reply, error);
  };

  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    // The body stopped before its end: the client hung up, or a drain cut a stalled upload. Node says
    // so with a socket error (ECONNRESET, "aborted") that reads like a lost database connection, but
    // no handler ran and nobody waits for the answer: no outage to report.
    if (request.raw.readableAborted) {
      request.log.info('the client closed the connection before its request was read whole');
      return render(request, reply, new AppError('validation-error', 'The request could not be read.'));
    }
    if (request.is404) return answerNoRoute(request, reply);
    const appError = toAppError(error, request.routeOptions.bodyLimit);
    // An AppError of 5xx (the key set unavailable) is an outage its source has already logged once.
    const unavailable = databaseUnavailableReason(error);
    if (unavailable !== null) request.log.warn({ reason: unavailable }, 'database unavailable: answered 503');
    else if (appError.status >= 500 && !(error instanceof AppError))
      request.log.error({ err: error }, 'request failed');
    return render(request, reply, appError);
  });

  app.setNotFoundHandler(answerNoRoute);
}
