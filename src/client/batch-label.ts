/**
 * The labels the command-line client and the dashboard's import give their batches (docs/reference.md §11.1,
 * §11.6): `<base> <k>/<n>`, the base being `--label` or the file's base name, extension included.
 * No Node.js module here: the dashboard bundles this file.
 */

/**
 * Longest base, in code points: the service takes labels of up to 200, and ` <k>/<n>` needs the rest
 * (19 code points even for a file of a billion batches).
 */
export const MAX_LABEL_BASE = 180;

/** What the service refuses in a label: Unicode control characters (category Cc). */
const CONTROL = /\p{Cc}/u;

/** Why `--label` cannot start the batches' labels, or null when it can. */
export function labelBaseRefusal(label: string): string | null {
  const length = [...label].length;
  if (length === 0) return '--label must not be empty';
  if (length > MAX_LABEL_BASE)
    return `--label must be at most ${MAX_LABEL_BASE} characters (it has ${length})`;
  if (CONTROL.test(label)) return '--label must not hold control characters';
  return null;
}

/**
 * The base of the labels of a file's batches without `--label`: its base name (`stdin` for standard
 * input), any control character (a file name may hold a newline) as U+FFFD, cut to the longest base.
 */
export function nameLabelBase(baseName: string): string {
  return [...baseName.replace(/\p{Cc}/gu, '\uFFFD')].slice(0, MAX_LABEL_BASE).join('');
}

/** The label of the `seq`-th batch of `total` (`?` while unknown: standard input, a pipe). */
export const batchLabel = (base: string, seq: number, total: number | null): string =>
  `${base} ${seq}/${total ?? '?'}`;
