import type { FieldError, PreviewEntry } from '../api-types.ts';

/**
 * The shapes of a file's preview in the dashboard: what `preview-run.ts` makes and the table and its
 * filter (`preview-filter.ts`) show. Types only, with no DOM, so the filter is tested in Node.
 */

/** An error of an item; a spreadsheet's also names the file's row and column of its field (docs/spreadsheets.md, "Errors"). */
export type ItemError = Omit<FieldError, 'code'> & { code: string; row?: number; column?: string | null };

/**
 * An entry of the preview table: the service's verdict, or `invalid` for an item the page does not
 * send, a line that is not JSON (`malformed_json`) or a spreadsheet item whose cells it could not read,
 * as the command line's dry run says (docs/import-pipeline.md).
 */
export interface PreviewRow {
  position: number;
  /** The item's line (JSON) or row (spreadsheet) in the file. */
  line: number;
  external_id: string | null;
  action: PreviewEntry['action'];
  changes: string[];
  /** The values of `changes` (docs/history.md): what the table shows as `from → to` and "added". */
  diff: PreviewEntry['diff'];
  /** The service's errors, or those found on the page (`malformed_json`, a cell's `invalid_type`). */
  errors: ItemError[];
  /** An added variant whose sku equals a stored one once leading zeros are dropped; still valid (docs/spreadsheets.md). */
  warnings: ItemError[];
}

/** A whole file's preview: totals over every item, and a row for each. */
export interface FilePreview {
  items: number;
  totals: Record<PreviewRow['action'], number>;
  /** How many warnings the items had. */
  warnings: number;
  /** Items the page cannot send at all: not JSON, or cells it cannot read. */
  unsendable: number;
  /** The positions of every item that is not valid (a line not JSON included): "send only the valid ones" skips them. */
  invalidPositions: Set<number>;
  rows: PreviewRow[];
  /** Why the service could not preview (the route missing, a refusal), when it could not. */
  unavailable: string | null;
}
