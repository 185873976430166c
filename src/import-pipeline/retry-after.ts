/**
 * Milliseconds to wait from a `Retry-After` header (RFC 9110 §10.2.3: delta-seconds or an HTTP date);
 * 1 s when absent or odd. The one rule for a 429, on the command line and in the dashboard: the
 * service always sends the header (docs/api-conventions.md), so the default only meets a proxy's 429.
 */
export function retryAfterMs(header: string | null | undefined, now = Date.now()): number {
  if (header === null || header === undefined || header.trim() === '') return 1000;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now);
}
