/**
 * A preview's or a history's diff element (docs/reference.md §11.2) as one line a person reads: the command
 * line's dry-run file and the dashboard's import preview both show changes with it.
 */

/** The fields of a diff element this text reads. */
export interface DiffElementText {
  path: string;
  op: string;
  sku?: string;
  from?: unknown;
  to?: unknown;
}

/** A value as it reads in JSON, so an empty string shows as `""` and a cleared angle as `null`. */
const shown = (value: unknown) => JSON.stringify(value) ?? 'nothing';

/**
 * `variants[0].price: 265 → 250` for a change, `variants[1]: added` for a new variant or image,
 * `product: added` for a created product (a history's path `""`), `variants: removed sku-1` for a
 * variant deleted through the API.
 */
export function diffText(element: DiffElementText): string {
  if (element.op === 'add') return `${element.path || 'product'}: added`;
  if (element.op === 'remove') return `${element.path}: removed ${element.sku ?? ''}`.trimEnd();
  return `${element.path}: ${shown(element.from)} → ${shown(element.to)}`;
}
