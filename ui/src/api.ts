import { isPolling } from './poller.ts';
import { currentSession } from './session.ts';

/** A call the service refused or could not answer, with a sentence a person can act on. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The problem body's `errors`, when the service named fields. */
    readonly fieldErrors: Array<{ field: string; code: string; message: string }> = [],
    /** A 429's `Retry-After` header as sent (seconds or an HTTP date), read by the import pipeline's one rule. */
    readonly retryAfter: string | null = null,
  ) {
    super(message);
  }
}

/** Listeners told of every 401/403, so the shell can show why in one place. */
const authListeners = new Set<(error: ApiError) => void>();

/** Calls `listener` with each 401/403 answer; returns the unsubscribe. */
export function onAuthError(listener: (error: ApiError) => void): () => void {
  authListeners.add(listener);
  return () => authListeners.delete(listener);
}

/**
 * How the shell renews a session whose token the service refused, or null when it cannot (a pasted
 * token). Resolves true when a new token is in the session.
 */
let renewer: (() => Promise<boolean>) | null = null;

/**
 * Lets `call` renew the session once when the service answers 401, and send the call again with the
 * new token: a token that expired just before its scheduled renewal is not a reason to sign out.
 */
export function renewSessionWith(renew: (() => Promise<boolean>) | null): void {
  renewer = renew;
}

/** What the service said, from a problem+json body or the analyzer's `{statusCode, message, error}`. */
function detailOf(body: unknown): string | null {
  if (typeof body !== 'object' || body === null) return null;
  const record = body as Record<string, unknown>;
  for (const key of ['detail', 'message', 'title']) {
    if (typeof record[key] === 'string' && record[key] !== '') return record[key];
  }
  return null;
}

/** The sentence shown for a refused call. */
function explain(status: number, detail: string | null): string {
  const said = detail ? ` The service said: “${detail}”` : '';
  if (status === 401)
    return `Not signed in (401): the service refused the token — missing, malformed, expired or not signed by a key it trusts.${said} Sign in again with a valid token.`;
  if (status === 403)
    return `Not allowed (403): the token is valid but lacks the scope this needs, or has no tenant.${said}`;
  if (status === 404) return `Not found (404).${said}`;
  if (status === 429)
    return `Too many requests (429): the tenant’s submission rate or backlog is over its limit.${said}`;
  if (status >= 500) return `The service failed (${status}).${said} Try again later.`;
  return `The request was refused (${status}).${said}`;
}

/** Options of one call. */
export interface CallOptions {
  method?: 'GET' | 'POST' | 'DELETE';
  json?: unknown;
  /** A body already serialized as JSON (large submissions are built as text). */
  body?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * Calls the service with the session's token and returns the raw response when it is 2xx; anything
 * else throws an ApiError. The token goes only into the Authorization header, never into a URL.
 */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  return send(path, options, true);
}

/**
 * One attempt of `call`. On a 401, when `mayRenew` and the shell can renew the session, the call is
 * sent once more with the renewed token (or with a token renewed meanwhile by the shell's timer);
 * only the second 401, or a refused renewal, reaches the auth listeners.
 */
async function send(path: string, options: CallOptions, mayRenew: boolean): Promise<Response> {
  const session = currentSession();
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (session) headers.authorization = `Bearer ${session.token}`;
  // Polling is logged at debug by the service (its request log), so its info log shows what people did.
  if (isPolling()) headers['x-poll'] = '1';
  let body = options.body;
  if (options.json !== undefined) body = JSON.stringify(options.json);
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? 'GET',
      headers,
      body,
      signal: options.signal,
      cache: 'no-store',
      credentials: 'omit',
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === 'AbortError') throw error;
    throw new ApiError(0, 'The service could not be reached. Check the connection and try again.');
  }
  if (response.ok) return response;
  if (response.status === 401 && mayRenew && session && (await renewed(session.token)))
    return send(path, options, false);
  const parsed: unknown = await response.json().catch(() => null);
  const error = new ApiError(
    response.status,
    explain(response.status, detailOf(parsed)),
    (parsed as { errors?: ApiError['fieldErrors'] } | null)?.errors ?? [],
    response.headers.get('retry-after'),
  );
  if (response.status === 401 || response.status === 403)
    for (const listener of authListeners) listener(error);
  throw error;
}

/** Whether the session now holds a token other than `refused`, renewing it if need be. */
async function renewed(refused: string): Promise<boolean> {
  const now = currentSession();
  if (now && now.token !== refused) return true;
  if (!renewer) return false;
  return renewer().catch(() => false);
}

/**
 * What a view shows for a failed call: the error's sentence, or nothing for a 401/403, which the
 * page's banner already explains (onAuthError).
 */
export function errorText(error: unknown): string {
  if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return '';
  return error instanceof Error ? error.message : String(error);
}

/**
 * What a refused call said about each field or query parameter it named (a 400's `errors`); each
 * message names its field (`min_price must be a finite number.`).
 */
export function fieldErrorTexts(error: unknown): string[] {
  return error instanceof ApiError ? error.fieldErrors.map((fieldError) => fieldError.message) : [];
}

/** `call`, then the JSON body. */
export async function getJson<T>(path: string, options: CallOptions = {}): Promise<T> {
  return (await call(path, options)).json() as Promise<T>;
}

/** A query string of the defined values (`?a=1&b=x`), or '' for none. */
export function query(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== '') search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** `{data, next_cursor}`: every list of the API. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}
