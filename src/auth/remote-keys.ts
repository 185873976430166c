import { performance } from 'node:perf_hooks';
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../http/errors.ts';

/**
 * How long a key set fetched from `AUTH_JWKS_URL` is used before it is fetched again. A key withdrawn
 * from the set stops verifying new tokens about this long after (plus one fetch); tokens already
 * verified are remembered up to 60 s longer (verify-token.ts).
 */
export const JWKS_MAX_AGE_MS = 10 * 60_000;

/** A token naming a `kid` the set lacks fetches it again (a key just added), at most this often. */
export const JWKS_COOLDOWN_MS = 30_000;

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

/** What the service is told of the key set's server; each is said once per outage. */
export interface KeySetEvents {
  /** A fetch failed; the last set fetched, if any, stands in for up to {@link JWKS_STALE_MAX_MS}. */
  onOutage(error: unknown): void;
  /** The outage has outlasted {@link JWKS_STALE_MAX_MS}: tokens needing the set now get 503s. */
  onStaleExpired(): void;
  /** A fetch worked again after an outage. */
  onRecovery(): void;
}

/** The set in use, and when it was fetched (on the monotonic clock). */
interface FetchedSet {
  keys: ReturnType<typeof createLocalJWKSet>;
  fetchedAt: number;
}

/**
 * The keys of `AUTH_JWKS_URL`. Every fetch goes through one place, which keeps the whole account:
 * one fetch at a time, a set older than {@link JWKS_MAX_AGE_MS} fetched again before it verifies,
 * an unknown `kid` fetching again at most every {@link JWKS_COOLDOWN_MS},
 * and while the server fails, a fetch at most every {@link JWKS_RETRY_MS} (never one per request)
 * and the last set verifying for {@link JWKS_STALE_MAX_MS} from the first failure. With no usable
 * set, a token that needs one is a {@link KeySetUnavailableError} (503), never a 401: it may be good.
 */
export function createRemoteKeySet(
  url: URL,
  events: KeySetEvents,
  {
    now = () => performance.now(),
    fetchTimeoutMs = 5_000,
    fetchImpl = fetch,
  }: {
    /** A monotonic clock in milliseconds (tests move it). */
    now?: () => number;
    fetchTimeoutMs?: number;
    fetchImpl?: typeof fetch;
  } = {},
): JWTVerifyGetKey {
  let current: FetchedSet | undefined;
  let pending: Promise<void> | undefined;
  let failingSince: number | undefined;
  let lastFailure = -Infinity;
  let staleExpiredTold = false;

  const fetchOnce = async (): Promise<void> => {
    try {
      const response = await fetchImpl(url, {
        headers: { accept: 'application/json, application/jwk-set+json' },
        // A key set that moved is the operator's to fix; following it could lead anywhere.
        redirect: 'manual',
        signal: AbortSignal.timeout(fetchTimeoutMs),
      });
      if (response.status !== 200) throw new Error(`the key set's server answered ${response.status}`);
      // Refuses what is not a JSON Web Key Set (JWKSInvalid).
      const set = (await response.json()) as JSONWebKeySet;
      current = { keys: createLocalJWKSet(set), fetchedAt: now() };
      if (failingSince !== undefined) {
        failingSince = undefined;
        lastFailure = -Infinity;
        staleExpiredTold = false;
        events.onRecovery();
      }
    } catch (error) {
      lastFailure = now();
      if (failingSince === undefined) {
        failingSince = lastFailure;
        events.onOutage(error);
      }
    }
  };

  /** Fetches the set unless a fetch is under way (then waits for it) or failed too recently. */
  const refresh = (): Promise<void> => {
    if (pending) return pending;
    if (failingSince !== undefined && now() - lastFailure < JWKS_RETRY_MS) return Promise.resolve();
    pending = fetchOnce().finally(() => {
      pending = undefined;
    });
    return pending;
  };

  /** Whether an outage has outlasted the grace of the last set fetched. */
  const staleExpired = () => failingSince !== undefined && now() - failingSince > JWKS_STALE_MAX_MS;

  /** The set to verify with now: the current one, unless an outage has outlasted its grace. */
  const usable = (): FetchedSet => {
    if (!current) throw new KeySetUnavailableError();
    if (staleExpired()) {
      if (!staleExpiredTold) events.onStaleExpired();
      staleExpiredTold = true;
      throw new KeySetUnavailableError();
    }
    return current;
  };

  return async (header, token) => {
    if (!current || staleExpired()) {
      await refresh();
    } else if (now() - current.fetchedAt >= JWKS_MAX_AGE_MS) {
      // A set past its age may hold a withdrawn key: wait for the next one. During an outage the
      // old set stands in, and the retries run behind it rather than hold every request up.
      if (failingSince === undefined) await refresh();
      else void refresh();
    }
    const set = usable();
    try {
      return await set.keys(header, token);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
      // A `kid` the set lacks may be a key just added.
      if (now() - set.fetchedAt >= JWKS_COOLDOWN_MS) await refresh();
      // During an outage the set may lack a key the server now has: the token may be good.
      if (failingSince !== undefined) throw new KeySetUnavailableError();
      return usable().keys(header, token);
    }
  };
}
