import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors as joseErrors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTVerifyGetKey,
} from 'jose';
import { AppError } from '../http/errors.ts';

/**
 * How long a key set fetched from `AUTH_JWKS_URL` is used before it is fetched again (jose's default,
 * stated here so that the docs can rely on it). A key withdrawn from the set stops verifying new
 * tokens within this time; tokens already verified are remembered up to 60 s longer (verify-token.ts).
 */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** While the key set cannot be fetched, how long the last one fetched goes on verifying tokens. */
export const JWKS_STALE_MAX_MS = 60 * 60_000;

/** While the key set cannot be fetched, how long after a failed fetch the next one is tried. */
export const JWKS_RETRY_MS = 5_000;

/** No key set can be had: the service cannot tell a good token from a bad one (503, not 401). */
export class KeySetUnavailableError extends AppError {
  constructor() {
    super(
      'internal-error',
      'Bearer tokens cannot be verified right now: the key set is unavailable. Try again shortly.',
      { status: 503, headers: { 'retry-after': String(JWKS_RETRY_MS / 1000) } },
    );
  }
}

// What a token, not the key set's server, is to blame for: the token stays a 401.
const TOKEN_FAULTS = [
  joseErrors.JWKSNoMatchingKey,
  joseErrors.JWKSMultipleMatchingKeys,
  joseErrors.JOSENotSupported,
  joseErrors.JOSEAlgNotAllowed,
  joseErrors.JWSInvalid,
];

/** Told when fetching the key set starts failing (once per outage) and when it works again. */
export interface KeySetEvents {
  onOutage(error: unknown): void;
  onRecovery(): void;
}

/**
 * The keys of `AUTH_JWKS_URL`, fetched every {@link JWKS_MAX_AGE_MS}. A key server that fails is
 * neither asked again on every request (one fetch per {@link JWKS_RETRY_MS} at most) nor allowed to
 * turn good tokens into 401s: the last set fetched goes on verifying for {@link JWKS_STALE_MAX_MS}
 * from the first failure, after which requests answer 503 until the server is back.
 */
export function createRemoteKeySet(
  url: URL,
  events: KeySetEvents,
  {
    now = Date.now,
    maxAgeMs = JWKS_MAX_AGE_MS,
    fetchTimeoutMs = 5_000,
  }: {
    /** The clock of the retry and stale windows (jose keeps its own for `maxAgeMs`). */
    now?: () => number;
    maxAgeMs?: number;
    fetchTimeoutMs?: number;
  } = {},
): JWTVerifyGetKey {
  const remote = createRemoteJWKSet(url, { cacheMaxAge: maxAgeMs, timeoutDuration: fetchTimeoutMs });
  let failingSince: number | undefined;
  let lastFailure = -Infinity;

  const failed = (error: unknown) => {
    lastFailure = now();
    if (failingSince === undefined) {
      failingSince = lastFailure;
      events.onOutage(error);
    }
  };
  const recovered = () => {
    if (failingSince === undefined) return;
    failingSince = undefined;
    lastFailure = -Infinity;
    events.onRecovery();
  };
  let stale: { set: JSONWebKeySet; keys: ReturnType<typeof createLocalJWKSet> } | undefined;
  /** The last set fetched, while it may still stand in for one that cannot be fetched. */
  const lastSet = (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    const set = remote.jwks();
    if (!set || failingSince === undefined || now() - failingSince > JWKS_STALE_MAX_MS) {
      throw new KeySetUnavailableError();
    }
    if (stale?.set !== set) stale = { set, keys: createLocalJWKSet(set) };
    return stale.keys(header, token);
  };

  return async (header, token) => {
    if (!remote.fresh) {
      if (now() - lastFailure < JWKS_RETRY_MS) return lastSet(header, token);
      try {
        await remote.reload();
      } catch (error) {
        failed(error);
        return lastSet(header, token);
      }
      recovered();
    }
    try {
      // An unknown `kid` makes jose fetch the set again (at most every 30 s): a key just added.
      return await remote(header, token);
    } catch (error) {
      if (TOKEN_FAULTS.some((fault) => error instanceof fault)) throw error;
      failed(error);
      return lastSet(header, token);
    }
  };
}
