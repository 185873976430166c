import { getJson, query } from '../api.ts';
import type { ItemErrors } from '../api-types.ts';
import { placeFailedItems, positionOf } from '../../../src/import-pipeline/error-places.ts';
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
  /** Its batch; null for an item the service refused on its own, which is in none. */
  batchId: string | null;
  external_id: string | null;
  sku: string | null;
  errors: ItemError[];
}

/** Errors read per batch at most: the batch's own page lists them all. */
const MAX_ERRORS_PER_BATCH = 500;

/**
 * The failed items of `group`'s batch (docs/api.md), each at its file position and line, so that
 * when only the valid items were sent, the errors still name the items' places in the file.
 */
export async function readSentErrors(group: SentGroup): Promise<SentItemErrors[]> {
  const page = await getJson<{ data: ItemErrors[] }>(
    `/products/ingestions/${encodeURIComponent(group.batchId)}/errors${query({ limit: MAX_ERRORS_PER_BATCH })}`,
  );
  return page.data.map((item) => ({
    position: positionOf(group.positions, item.index),
    line: group.lines[item.index] ?? 0,
    batchId: group.batchId,
    external_id: item.external_id,
    sku: item.sku,
    errors: item.errors,
  }));
}

/**
 * Places the errors of a spreadsheet's failed items at the file's row and column of their fields
 * (docs/spreadsheets.md#errors) by reading the file once more (the pipeline's `placeFailedItems`), so
 * an import of 100,000 rows does not hold every item's cells while its batches run.
 */
export async function placeSentErrors(
  source: ImportFile,
  failed: SentItemErrors[],
): Promise<SentItemErrors[]> {
  return isSheet(source) ? placeFailedItems(source.items(), failed) : failed;
}
