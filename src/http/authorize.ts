import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import { UnauthorizedError } from '../errors/app-errors.ts';
import type { AuthorizationCheck, Principal, Scope } from '../auth/verify-token.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by {@link Authorize} hooks before the body is read. */
    principal?: Principal;
  }
}

/** Makes the `onRequest` hook that admits only callers holding `scope`. */
export type Authorize = (scope: Scope) => onRequestHookHandler;

/**
 * Creates route hooks that check the bearer token. They run on request, before the body is read,
 * so a caller without credentials gets 401/403 and never makes the service parse a large body.
 */
export function createAuthorize(check: AuthorizationCheck): Authorize {
  return (scope) =>
    async function authorize(request: FastifyRequest) {
      // Node keeps the first of several Authorization headers and drops the rest; a proxy that
      // reads the last would have judged other credentials than these. HTTP allows one.
      if (authorizationHeaders(request.raw.rawHeaders) > 1) {
        throw new UnauthorizedError('Send one Authorization header, not several.', true);
      }
      request.principal = await check(request.headers.authorization, scope);
    };
}

/** How many Authorization fields the request carried (`rawHeaders` alternates names and values). */
function authorizationHeaders(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') count++;
  }
  return count;
}

/** The caller of a route guarded by {@link Authorize}. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing its authorize hook');
  return request.principal;
}
