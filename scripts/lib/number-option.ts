/**
 * Numbers given on a script's command line, checked where they are read: `Number()` alone takes a typo
 * for NaN, and NaN runs on (a head of NaNs, a pool of no threads) instead of stopping with the rule.
 */

// A sign is read, so that the range, not the spelling, refuses `-1` and says why.
export const WHOLE = /^[-+]?\d+$/;
export const DECIMAL = /^[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$/i;

/** `text` as a number if it is spelled as `pattern` allows, finite and `isValid`; else the rule. */
export function parseNumber(
  option: string,
  text: string,
  pattern: RegExp,
  rule: string,
  isValid: (n: number) => boolean,
): number {
  const value = pattern.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || !isValid(value)) throw new Error(`${option} must be ${rule}, not ${text}`);
  return value;
}

/** Digits with an optional sign: `1e3` or `7.0` for a count is more likely a slip than a choice. */
export const wholeNumber = (option: string, text: string, min: number, max: number): number =>
  parseNumber(option, text, WHOLE, `a whole number from ${min} to ${max}`, (n) => n >= min && n <= max);

/** The usual decimal spellings: `0.05`, `.05`, `5e-2`, `1.`. */
export const decimalNumber = (option: string, text: string, min: number, max: number): number =>
  parseNumber(option, text, DECIMAL, `a number from ${min} to ${max}`, (n) => n >= min && n <= max);
