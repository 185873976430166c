import type { FieldError } from '../http/errors.ts';
import type { ItemFailure } from './batch-progress.repository.ts';

/** How an item that cannot be written is recorded, and which write errors are the data's fault. */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The `external_id` and `sku` an errors page shows for a failed item: the item's external_id if it
 * is a string; the sku of the variant the first error is about, else of the first variant.
 */
export function itemKeys(
  item: unknown,
  errors: readonly FieldError[],
): { external_id: string | null; sku: string | null } {
  if (!isRecord(item)) return { external_id: null, sku: null };
  const variants = Array.isArray(item.variants) ? (item.variants as unknown[]) : [];
  const skuOf = (index: number) => {
    const variant = variants[index];
    return isRecord(variant) && typeof variant.sku === 'string' ? variant.sku : null;
  };
  const about = /^variants\[(\d+)\]/.exec(errors[0]?.field ?? '');
  return {
    external_id: typeof item.external_id === 'string' ? item.external_id : null,
    sku: (about ? skuOf(Number(about[1])) : null) ?? skuOf(0),
  };
}

/**
 * Whether a failed write says something about the data (so retrying the item alone may isolate
 * it) rather than about the connection or the server (so the whole job should be retried later):
 * PostgreSQL's data-exception (22) and integrity (23) classes, errors without a SQLSTATE that are
 * not connection errors, and XX000 (internal error). An XX000 that one item's value trips would trip
 * again on every retry of the whole job; trying the items one by one is safe whatever its cause,
 * and isolates that item.
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string')
    return !(error instanceof Error && /connect|terminat|ECONN|timeout/i.test(error.message));
  return code.startsWith('22') || code.startsWith('23') || code === 'XX000';
}

/** The record of an item that could not be written for a reason that is not the caller's. */
export const internalError = (index: number, item: unknown): ItemFailure => {
  const errors: FieldError[] = [
    {
      field: '',
      code: 'internal_error',
      message: 'The item could not be written; this is not a fault of the item.',
    },
  ];
  return { index, ...itemKeys(item, errors), errors };
};
