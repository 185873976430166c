import type { FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AuthorizationCheck, Principal, Scope } from './verify-token.ts';

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
      request.principal = await check(request.headers.authorization, scope);
    };
}

/** The caller of a route guarded by {@link Authorize}. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route is missing its authorize hook');
  return request.principal;
}
