import { getJson, query } from '../api.ts';
import type { ItemErrors } from '../api-types.ts';
import { placeErrors, type SheetItem } from '../../../src/spreadsheets/sheet-items.ts';
import { isSheet, type ImportFile } from './file-items.ts';
import type { ItemError } from './preview-run.ts';

/** A batch this import made, with the file position and line (row) of each item it holds, by index. */
export interface SentGroup {
  batchId: string;
  positions: number[];
  lines: number[];
}

/** A failed item of this import, named by its place in the file, not its index in a batch. */
export interface SentItemErrors {
  position: number;
  line: number;
  batchId: string;
  external_id: string | null;
  sku: string | null;
  errors: ItemError[];
}

/** Errors read per batch at most: the batch's own page lists them all. */
const MAX_ERRORS_PER_BATCH = 500;

/**
 * The failed items of `group`'s batch (CONTRACT §7), each at its file position and line, so that
 * when only the valid items were sent, the errors still name the items' places in the file.
 */
export async function readSentErrors(group: SentGroup): Promise<SentItemErrors[]> {
  const page = await getJson<{ data: ItemErrors[] }>(
    `/products/ingestions/${encodeURIComponent(group.batchId)}/errors${query({ limit: MAX_ERRORS_PER_BATCH })}`,
  );
  return page.data.map((item) => ({
    position: group.positions[item.index] ?? -1,
    line: group.lines[item.index] ?? 0,
    batchId: group.batchId,
    external_id: item.external_id,
    sku: item.sku,
    errors: item.errors,
  }));
}

/**
 * Places the errors of a spreadsheet's failed items at the file's row and column of their fields
 * (CONTRACT §11.5) by reading the file once more: only the failed items' `locate` is kept, so an
 * import of 100,000 rows does not hold every item's cells while its batches run.
 */
export async function placeSentErrors(
  source: ImportFile,
  failed: SentItemErrors[],
): Promise<SentItemErrors[]> {
  if (!isSheet(source)) return failed;
  const wanted = new Set(failed.map((item) => item.position));
  const places = new Map<number, SheetItem['locate']>();
  for await (const item of source.items()) {
    if (wanted.has(item.position) && item.locate !== undefined) places.set(item.position, item.locate);
    if (places.size === wanted.size) break;
  }
  return failed.map((item) => {
    const locate = places.get(item.position);
    return locate === undefined ? item : { ...item, errors: placeErrors(item.errors, locate) };
  });
}
