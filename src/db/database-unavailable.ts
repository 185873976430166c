/**
 * Which database errors mean "the database cannot do this now" rather than "this request is
 * wrong" or "this code is wrong": the API answers them 503 with Retry-After, and the worker leaves
 * the batch for a retry. One table, read by both.
 */

/** Seconds a client is told to wait (Retry-After) while the database refuses work. */
export const DATABASE_RETRY_AFTER_SECONDS = 10;

/**
 * SQLSTATEs of a database that refuses work for now: read-only (a standby after a failover, or
 * `default_transaction_read_only`), out of resources, shutting down or starting up. Class 08
 * (connection exception) is matched as a class.
 */
const UNAVAILABLE_SQLSTATES: Readonly<Record<string, string>> = {
  '25006': 'read_only_sql_transaction',
  '53000': 'insufficient_resources',
  '53100': 'disk_full',
  '53200': 'out_of_memory',
  '53300': 'too_many_connections',
  '57P01': 'admin_shutdown',
  '57P02': 'crash_shutdown',
  '57P03': 'cannot_connect_now',
  '57P05': 'idle_session_timeout',
};

/** Errors without a SQLSTATE that say the connection is gone or cannot be had (pg, Node sockets). */
const CONNECTION_FAILURE = /connect|terminat|ECONN|EPIPE|ETIMEDOUT|EHOSTUNREACH|timeout/i;

/** Whether `error`, having no SQLSTATE, is a lost or refused connection. */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (
    CONNECTION_FAILURE.test(error.message) || (typeof code === 'string' && CONNECTION_FAILURE.test(code))
  );
}

/** A PostgreSQL SQLSTATE (no class starts with E, unlike Node's socket codes such as EPIPE). */
const SQLSTATE = /^[0-9A-DF-Z][0-9A-Z]{4}$/;

/** The SQLSTATE's name when `error` says the database is unavailable for now, else null. */
export function databaseUnavailableReason(error: unknown): string | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SQLSTATE.test(code)) {
    return code.startsWith('08') ? 'connection_exception' : (UNAVAILABLE_SQLSTATES[code] ?? null);
  }
  return isConnectionFailure(error) ? 'connection_failure' : null;
}
