/**
 * Which values of an enumeration a client most likely meant. Values stay exact and case-sensitive
 * (docs/reference.md §5): this only words the error (docs/reference.md §11.8).
 */

/**
 * What is left of a value once case and spacing (whitespace, `-` and `_`) are set aside, so that
 * `mid century modern` is nearest to `Mid-Century Modern`.
 */
const looseKey = (value: string) => value.toLowerCase().replace(/[\s_-]+/g, '');

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const substitution = rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      let best = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}

/** Texts longer than this are not compared: no value of an enumeration is near one. */
const MAX_COMPARED_LENGTH = 100;

/**
 * How far `sent` is from `value`, case and spacing aside, or null when too far to suggest: a
 * value that starts with what was sent (`sectional` → `Sectional Set`) is near, others within
 * a third of the longer text's letters (at least one).
 */
function distance(sent: string, value: string): number | null {
  const a = looseKey(sent);
  const b = looseKey(value);
  if (a === b) return 0;
  if (a.length > 0 && b.startsWith(a)) return 1;
  const limit = Math.max(1, Math.floor(Math.max(a.length, b.length) / 3));
  // No fewer edits than the lengths differ by: skip the table where that is already too many.
  if (Math.abs(a.length - b.length) > limit) return null;
  const edits = editDistance(a, b);
  return edits <= limit ? edits : null;
}

/**
 * Up to `max` allowed values closest to `sent`, nearest first (ties in the enumeration's order);
 * empty when none is near or `sent` is not a string.
 */
export function closestEnumValues(sent: unknown, allowed: readonly unknown[], max = 3): string[] {
  if (typeof sent !== 'string' || sent.length > MAX_COMPARED_LENGTH) return [];
  return allowed
    .flatMap((value, order) => {
      if (typeof value !== 'string' || value === sent) return [];
      const d = distance(sent, value);
      return d === null ? [] : [{ value, d, order }];
    })
    .sort((x, y) => x.d - y.d || x.order - y.order)
    .slice(0, max)
    .map(({ value }) => value);
}
