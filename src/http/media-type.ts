/**
 * Which of two media types an `Accept` header prefers (RFC 9110 §12.5.1). Each offer gets the
 * quality of the most specific range that matches it (`text/csv` over `text/*` over `*\/*`); the
 * higher quality wins, then the more specific match. On a full tie the default wins, whatever the
 * order the ranges were listed in (the RFC gives that order no meaning).
 */

interface AcceptRange {
  type: string;
  subtype: string;
  q: number;
}

function parseAccept(header: string): AcceptRange[] {
  const ranges: AcceptRange[] = [];
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const [type, subtype] = range.split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=').map((s) => s.trim());
      // A malformed weight makes the range unusable rather than the most preferred.
      if (name === 'q') q = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(value ?? '') ? Number(value) : 0;
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** How much `ranges` accept `mediaType`: [quality, specificity], or null when no range matches. */
function acceptance(ranges: readonly AcceptRange[], mediaType: string): [number, number] | null {
  const [type, subtype] = mediaType.split('/');
  let best: [number, number] | null = null;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity > (best?.[1] ?? -1)) best = [range.q, specificity];
  }
  return best;
}

/**
 * The quality `accept` gives `mediaType`: that of the most specific range matching it, 0 when none
 * does. No header (or one without a usable range) accepts every type at 1.
 */
export function acceptQuality(accept: string | undefined, mediaType: string): number {
  if (!accept) return 1;
  const ranges = parseAccept(accept);
  if (ranges.length === 0) return 1;
  return acceptance(ranges, mediaType)?.[0] ?? 0;
}

/**
 * Whether `accept` prefers `alternative` to `fallback`: only when it accepts the alternative
 * (q > 0) and ranks it strictly higher. No header, `*\/*`, or an equal ranking keep the fallback.
 */
export function prefersMediaType(accept: string | undefined, alternative: string, fallback: string): boolean {
  if (!accept) return false;
  const ranges = parseAccept(accept);
  const wanted = acceptance(ranges, alternative);
  if (!wanted || wanted[0] === 0) return false;
  const usual = acceptance(ranges, fallback) ?? [0, -1];
  return wanted[0] > usual[0] || (wanted[0] === usual[0] && wanted[1] > usual[1]);
}

/**
 * Whether `accept` names `mediaType` itself (not only through `*\/*` or `type/*`) with a weight
 * above 0: what a browser asking for a page sends (`text/html,application/xhtml+xml,…`).
 */
export function namesMediaType(accept: string | undefined, mediaType: string): boolean {
  if (!accept) return false;
  const [type, subtype] = mediaType.split('/');
  return parseAccept(accept).some((range) => range.type === type && range.subtype === subtype && range.q > 0);
}
