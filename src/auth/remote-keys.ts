import { performance } from 'node:perf_hooks';
import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../errors/app-errors.ts';

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
      { status: 503, retryAfterSeconds: JWKS_RETRY_MS / 1000 },
    );
  }
}

/** What the service is told of the key set's server; each is said once per outage. */
export interface KeySetEvents {
  /**
   * A fetch failed. `standIn`: a set fetched earlier verifies for up to {@link JWKS_STALE_MAX_MS};
   * without one, tokens needing the set get 503s from now on (a wrong URL, say).
   */
  onOutage(error: unknown, standIn: boolean): void;
  /** The outage has outlasted {@link JWKS_STALE_MAX_MS}: tokens needing the set now get 503s. */
  onStaleExpired(): void;
  /** A fetch worked again after an outage. */
  onRecovery(): void;
}

/** The set in use, the `kid`s it has, and when it was fetched (on the monotonic clock). */
interface FetchedSet {
  keys: ReturnType<typeof createLocalJWKSet>;
  kids: ReadonlySet<string>;
  fetchedAt: number;
}

/** A key set is a few keys: anything much larger is not one, and must not fill the memory. */
const MAX_KEY_SET_BYTES = 1024 * 1024;

/** The body of `response`, refused past `limit` bytes without reading the rest. */
async function readLimited(response: Response, limit: number): Promise<string> {
  if (Number(response.headers.get('content-length') ?? 0) > limit) {
    await response.body?.cancel();
    throw new Error(`the key set is larger than ${limit} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > limit) throw new Error(`the key set is larger than ${limit} bytes`);
    chunks.push(chunk as Uint8Array);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Calls an event handler; a handler that throws must not turn an outage into a crash or a 401. */
function tell(handler: () => void): void {
  try {
    handler();
  } catch {
    // The handler's own failure has nowhere better to go.
  }
}

/**
 * The keys of `AUTH_JWKS_URL`. Every fetch goes through one place, which keeps the whole account:
 * one fetch at a time; a set older than {@link JWKS_MAX_AGE_MS} fetched again before it verifies;
 * an unknown `kid` fetching again at most every {@link JWKS_COOLDOWN_MS}; and while the server
 * fails, one retry per {@link JWKS_RETRY_MS} (never one per request) running behind the last set,
 * which verifies for {@link JWKS_STALE_MAX_MS} from the first failure. A token the service cannot
 * judge without the set is a {@link KeySetUnavailableError} (503), never a 401: it may be good.
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

  /** The set at `url`; throws what went wrong (JWKSInvalid for what is not a key set). */
  const fetchSet = async (): Promise<FetchedSet> => {
    const response = await fetchImpl(url, {
      headers: { accept: 'application/json, application/jwk-set+json' },
      // A key set that moved is the operator's to fix; following it could lead anywhere.
      redirect: 'manual',
      signal: AbortSignal.timeout(fetchTimeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`the key set's server answered ${response.status}`);
    }
    const set = JSON.parse(await readLimited(response, MAX_KEY_SET_BYTES)) as JSONWebKeySet;
    const keys = createLocalJWKSet(set);
    const kids = new Set(set.keys.flatMap((key) => (typeof key.kid === 'string' ? [key.kid] : [])));
    return { keys, kids, fetchedAt: now() };
  };

  const fetchOnce = async (): Promise<void> => {
    let fetched: FetchedSet;
    try {
      fetched = await fetchSet();
    } catch (error) {
      lastFailure = now();
      if (failingSince === undefined) {
        failingSince = lastFailure;
        tell(() => events.onOutage(error, current !== undefined));
      }
      return;
    }
    current = fetched;
    if (failingSince !== undefined) {
      failingSince = undefined;
      lastFailure = -Infinity;
      staleExpiredTold = false;
      tell(() => events.onRecovery());
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

  /** Whether an outage has lasted past the grace of the last set fetched (or of none). */
  const staleExpired = () => failingSince !== undefined && now() - failingSince > JWKS_STALE_MAX_MS;

  /** The set to verify with now: the current one, unless an outage has outlasted its grace. */
  const usable = (): FetchedSet => {
    if (staleExpired()) {
      if (!staleExpiredTold) tell(() => events.onStaleExpired());
      staleExpiredTold = true;
      throw new KeySetUnavailableError();
    }
    if (!current) throw new KeySetUnavailableError();
    return current;
  };

  return async (header, token) => {
    if (!current || staleExpired()) {
      await refresh();
    } else if (now() - current.fetchedAt >= JWKS_MAX_AGE_MS) {
      // A set past its age may hold a withdrawn key: the first fetch after that is waited for, even
      // after an earlier failure. Only when that fetch fails does the old set stand in, with the
      // retries running behind it rather than holding every request up.
      const failedSinceAged = lastFailure >= current.fetchedAt + JWKS_MAX_AGE_MS;
      if (failedSinceAged) void refresh();
      else await refresh();
    }
    const set = usable();
    try {
      return await set.keys(header, token);
    } catch (error) {
      // A `kid` the set has but whose key does not fit the token (another alg) is the token's fault.
      const absent = header.kid !== undefined && !set.kids.has(header.kid);
      if (!(error instanceof joseErrors.JWKSNoMatchingKey) || !absent) throw error;
      // A `kid` the set lacks may be a key just added.
      if (now() - set.fetchedAt >= JWKS_COOLDOWN_MS) await refresh();
      // During an outage the server may have the key the last set lacks: the token may be good.
      if (failingSince !== undefined) throw new KeySetUnavailableError();
      return usable().keys(header, token);
    }
  };
}
