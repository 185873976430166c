import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { ForbiddenError, UnauthorizedError } from '../errors/app-errors.ts';
import { createTtlCache } from '../runtime/ttl-cache.ts';
import type { VerificationKeys } from './keys.ts';
import { KeySetUnavailableError } from './remote-keys.ts';
import type { Scope } from './scopes.ts';

export { ALL_SCOPES, SCOPES, type Scope } from './scopes.ts';

/** Longest tenant id, in characters: as long as an `external_id` or a `sku` may be. */
export const MAX_TENANT_LENGTH = 255;

/** Characters of `text` as a person counts them (an astral character is one, not two). */
function codePoints(text: string): number {
  // Most ids are short and ASCII: the UTF-16 length bounds the count from above.
  if (text.length <= MAX_TENANT_LENGTH) return text.length;
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Who is calling: the tenant named by the token, and what the token allows. */
export interface Principal {
  tenantId: string;
  scopes: ReadonlySet<string>;
}

/** What a token is checked against: the keys, the expected issuer and audience, the tenant claim. */
export interface TokenVerifierOptions {
  keys: VerificationKeys;
  issuer?: string | undefined;
  audience?: string | undefined;
  tenantClaim: string;
  /**
   * Refuse tokens without `exp` (401). Off by default: docs/reference.md §3 lists what makes a token invalid,
   * and a missing `exp` is not on the list (RFC 7519 makes the claim optional). An operator whose
   * issuer always sets it can turn this on, so that a leaked token cannot stay valid forever.
   */
  requireExp?: boolean;
  /**
   * How long a verified token is remembered, so that a client polling with one token is not
   * re-verified on every request (0 turns it off). A remembered token is still refused once its
   * `exp` passes. A key withdrawn from the JWKS stops admitting its tokens once the key set is
   * fetched again (`JWKS_MAX_AGE_MS`) and the tokens it verified are no longer remembered.
   */
  cacheTtlMs?: number;
  /** How many verified tokens are remembered at most (the least recently used are dropped). */
  cacheMaxEntries?: number;
  /** The clock (tests move it). */
  now?: () => number;
}

/** Checks an `Authorization` header and answers the caller, or throws 401/403 errors. */
export type AuthorizationCheck = (authorization: string | undefined, scope: Scope) => Promise<Principal>;

function scopesOf(payload: JWTPayload): Set<string> {
  const found = new Set<string>();
  if (typeof payload.scope === 'string') for (const s of payload.scope.split(' ')) if (s) found.add(s);
  const scp = payload.scp;
  if (Array.isArray(scp)) for (const s of scp) if (typeof s === 'string') found.add(s);
  if (typeof scp === 'string') for (const s of scp.split(' ')) if (s) found.add(s);
  return found;
}

/**
 * Whether `token` is a compact JWS in the one spelling its bytes have: three base64url parts, no
 * padding, no spare bits set in a last character. jose decodes leniently, so `sig=` or a last
 * character that differs only in unused bits would verify too, and one token would have many
 * spellings (each its own entry in the cache of verified tokens, each past a denylist of another).
 */
function isCanonicalCompact(token: string): boolean {
  const parts = token.split('.');
  return (
    parts.length === 3 &&
    parts.every(
      (part) =>
        /^[A-Za-z0-9_-]+$/.test(part) && Buffer.from(part, 'base64url').toString('base64url') === part,
    )
  );
}

/**
 * Throws the 401 a token's unverified claims earn on their own: `exp` passed, `nbf` to come, or
 * another `iss` or `aud` than configured. Used only where the signature cannot be checked.
 */
function refuseOnClaims(
  token: string,
  claims: { issuer?: string | undefined; audience?: string | undefined; currentDate: Date },
): void {
  let payload: JWTPayload;
  try {
    payload = decodeJwt(token);
  } catch {
    throw new UnauthorizedError('The bearer token is malformed.', true);
  }
  const nowSeconds = claims.currentDate.getTime() / 1000;
  if (typeof payload.exp === 'number' && payload.exp <= nowSeconds) {
    throw new UnauthorizedError('The bearer token has expired.', true);
  }
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : (payload.aud ?? []);
  const failing =
    typeof payload.nbf === 'number' && payload.nbf > nowSeconds
      ? 'nbf'
      : claims.issuer !== undefined && payload.iss !== claims.issuer
        ? 'iss'
        : claims.audience !== undefined && !audiences.includes(claims.audience)
          ? 'aud'
          : undefined;
  if (failing) throw new UnauthorizedError(`The bearer token's "${failing}" claim is not acceptable.`, true);
}

/** Creates the bearer-token check (docs/reference.md §3): 401 for bad credentials, 403 for missing rights. */
export function createTokenVerifier(options: TokenVerifierOptions): AuthorizationCheck {
  const { keys, now = Date.now } = options;
  const verified = createTtlCache<JWTPayload & { exp: number }>({
    ttlMs: options.cacheTtlMs ?? 60_000,
    maxEntries: options.cacheMaxEntries ?? 1000,
    now,
  });

  const verify = async (token: string): Promise<JWTPayload> => {
    // The same bytes verify the same way until the clock passes `exp` (`nbf` has already passed).
    const remembered = verified.get(token);
    if (remembered && now() < remembered.exp * 1000) return remembered;
    const payload = await verifySignatureAndClaims(token);
    // A token without `exp` never expires; it is remembered for the cache's time-to-live only.
    verified.set(token, { ...payload, exp: typeof payload.exp === 'number' ? payload.exp : Infinity });
    return payload;
  };

  const verifySignatureAndClaims = async (token: string): Promise<JWTPayload> => {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw new UnauthorizedError('The bearer token is malformed.', true);
    }
    const claims = {
      issuer: options.issuer,
      audience: options.audience,
      requiredClaims: options.requireExp ? ['exp'] : [],
      currentDate: new Date(now()),
    };
    try {
      if (alg === 'HS256' && keys.secret) {
        return (await jwtVerify(token, keys.secret, { ...claims, algorithms: ['HS256'] })).payload;
      }
      if (alg && alg !== 'none' && !alg.startsWith('HS') && keys.asymmetric) {
        const { key, algorithms } = keys.asymmetric;
        const result =
          typeof key === 'function'
            ? await jwtVerify(token, key, { ...claims, algorithms })
            : await jwtVerify(token, key, { ...claims, algorithms });
        return result.payload;
      }
    } catch (error) {
      if (error instanceof KeySetUnavailableError) {
        // Without keys the signature cannot be judged, but claims that fail make the token bad
        // whoever signed it: refusing on them (401) never lets a forged token in.
        refuseOnClaims(token, claims);
        throw error;
      }
      if (error instanceof joseErrors.JWTExpired)
        throw new UnauthorizedError('The bearer token has expired.', true);
      if (error instanceof joseErrors.JWTClaimValidationFailed && error.reason === 'missing') {
        throw new UnauthorizedError(
          `The bearer token has no "${error.claim}" claim, which is required.`,
          true,
        );
      }
      if (error instanceof joseErrors.JWTClaimValidationFailed) {
        throw new UnauthorizedError(`The bearer token's "${error.claim}" claim is not acceptable.`, true);
      }
      throw new UnauthorizedError('The bearer token could not be verified.', true);
    }
    throw new UnauthorizedError('The bearer token uses an algorithm this service does not accept.', true);
  };

  return async (authorization, scope) => {
    // Linear on any header: no part of the pattern can match the same text two ways.
    const match = authorization === undefined ? null : /^bearer\s+(\S+)\s*(.*)$/i.exec(authorization);
    if (!match?.[1]) {
      throw new UnauthorizedError('A bearer token is required (Authorization: Bearer <JWT>).', false);
    }
    // Something after the token: a token was sent, and it is not one that verifies.
    if (match[2] || !isCanonicalCompact(match[1])) {
      throw new UnauthorizedError('The bearer token is malformed.', true);
    }
    const payload = await verify(match[1]);
    const tenant = payload[options.tenantClaim];
    // A tenant of white space only is no tenant (an issuer's empty field, padded).
    if (typeof tenant !== 'string' || tenant.trim().length === 0) {
      throw new ForbiddenError(`The token names no tenant (claim "${options.tenantClaim}").`);
    }
    // PostgreSQL text cannot hold U+0000, and it would store a lone surrogate as U+FFFD, merging
    // two claims into one tenant: neither is a usable tenant id. Nor is one longer than a key (every
    // index starts with the tenant, and an index row holds at most 2704 bytes).
    if (tenant.includes('\u0000') || !tenant.isWellFormed() || codePoints(tenant) > MAX_TENANT_LENGTH) {
      throw new ForbiddenError(
        `The token's tenant (claim "${options.tenantClaim}") is not a usable tenant id.`,
      );
    }
    const scopes = scopesOf(payload);
    if (!scopes.has(scope)) throw new ForbiddenError(`The token lacks the scope "${scope}".`);
    return { tenantId: tenant, scopes };
  };
}
