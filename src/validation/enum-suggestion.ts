/**
 * The value of an enumeration a client most likely meant: one that differs from what was sent only
 * in letter case or in spacing (whitespace, `-` and `_`), such as `mid century modern` for
 * `Mid-Century Modern`. Values stay exact and case-sensitive (CONTRACT §5): this only words the error.
 */

/** What is left of a value once case and spacing are set aside. */
const looseKey = (value: string) => value.toLowerCase().replace(/[\s_-]+/g, '');

/** Per allowed list, the values by loose key; a key two values share suggests neither. */
const lookups = new WeakMap<readonly unknown[], Map<string, string | null>>();

function lookupFor(allowed: readonly unknown[]): Map<string, string | null> {
  let lookup = lookups.get(allowed);
  if (lookup) return lookup;
  lookup = new Map();
  for (const value of allowed) {
    if (typeof value !== 'string') continue;
    const key = looseKey(value);
    lookup.set(key, lookup.has(key) ? null : value);
  }
  lookups.set(allowed, lookup);
  return lookup;
}

/** The one allowed value `sent` matches but for case and spacing, or null. */
export function suggestEnumValue(sent: unknown, allowed: readonly unknown[]): string | null {
  if (typeof sent !== 'string') return null;
  const match = lookupFor(allowed).get(looseKey(sent));
  return match === undefined || match === sent ? null : match;
}
