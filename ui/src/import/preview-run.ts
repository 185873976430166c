import { ApiError, call } from '../api.ts';
import type { FieldError, Preview, PreviewEntry } from '../api-types.ts';
import { placeErrors } from '../../../src/spreadsheets/sheet-items.ts';
import { malformedJsonError } from '../../../src/client/file-format.ts';
import { inGroups, type FileItem, type ImportFile } from './file-items.ts';
import { envelope, SUBMISSION_SIZE } from './submit-groups.ts';

/** An error of an item; a spreadsheet's also names the file's row and column of its field (CONTRACT §11.5). */
export type ItemError = Omit<FieldError, 'code'> & { code: string; row?: number; column?: string | null };

/**
 * An entry of the preview table: the service's verdict, `not_json` for a line the page could not read,
 * or `invalid` for a spreadsheet item whose cells the page could not read (never sent, as the CLI does).
 */
export interface PreviewRow {
  position: number;
  /** The item's line (JSON) or row (spreadsheet) in the file. */
  line: number;
  external_id: string | null;
  action: PreviewEntry['action'] | 'not_json';
  changes: string[];
  /** The values of `changes` (CONTRACT §11.2): what the table shows as `from → to` and "added". */
  diff: PreviewEntry['diff'];
  /** The service's errors, or those found on the page (`malformed_json`, a cell's `invalid_type`). */
  errors: ItemError[];
  /** An added variant whose sku equals a stored one once leading zeros are dropped; still valid (docs/spreadsheets.md). */
  warnings: ItemError[];
}

/** A whole file's preview: totals over every item, and the rows worth showing. */
export interface FilePreview {
  items: number;
  totals: Record<PreviewRow['action'], number>;
  /** How many warnings the items had (the rows with one are always kept for the table). */
  warnings: number;
  /** Items the page cannot send at all: not JSON, or cells it cannot read. */
  unsendable: number;
  /** The positions of every item that is not valid (invalid or not JSON): "send only the valid ones" skips them. */
  invalidPositions: Set<number>;
  rows: PreviewRow[];
  /** Why the service could not preview (the route missing, a refusal), when it could not. */
  unavailable: string | null;
}

/** Rows kept for the table: the first ones, and every invalid one up to a bound. */
const FIRST_ROWS = 200;
const MAX_INVALID_ROWS = 1000;

/** The errors of an item the page does not send. */
function unsentErrors(item: FileItem & { text?: undefined }): ItemError[] {
  if (item.malformed === undefined) return item.cellErrors;
  return [malformedJsonError(item.line, item.malformed)];
}

/**
 * Previews a file (CONTRACT §10.3) group by group as it is read, calling `onProgress` after each.
 * Items that are not JSON, or whose spreadsheet cells cannot be read, are counted here; the service
 * never sees them. A spreadsheet's errors are placed at the row and column of their field.
 */
export async function previewFile(
  source: ImportFile,
  onProgress: (preview: FilePreview) => void,
): Promise<FilePreview> {
  const preview: FilePreview = {
    items: 0,
    totals: { create: 0, update: 0, unchanged: 0, invalid: 0, not_json: 0 },
    warnings: 0,
    unsendable: 0,
    invalidPositions: new Set(),
    rows: [],
    unavailable: null,
  };
  const keep = (row: PreviewRow) => {
    const bad = row.action === 'invalid' || row.action === 'not_json';
    if (bad) preview.invalidPositions.add(row.position);
    preview.warnings += row.warnings.length;
    const notable = bad || row.warnings.length > 0;
    if (row.position < FIRST_ROWS || (notable && preview.rows.length < FIRST_ROWS + MAX_INVALID_ROWS))
      preview.rows.push(row);
  };
  for await (const group of inGroups(source.items(), SUBMISSION_SIZE)) {
    const wellFormed = group.filter((item) => item.text !== undefined);
    let answer: Preview | null = null;
    if (wellFormed.length > 0 && preview.unavailable === null) {
      try {
        const response = await call('/products/ingestions/preview', {
          method: 'POST',
          body: envelope(wellFormed.map((item) => item.text ?? '')),
        });
        answer = (await response.json()) as Preview;
      } catch (error) {
        if (!(error instanceof ApiError) || error.status === 0 || error.status >= 500 || error.status === 429)
          throw error;
        preview.unavailable =
          error.status === 404 || error.status === 405
            ? 'This service has no preview route (CONTRACT §10.3); the file can still be submitted.'
            : error.message;
      }
    }
    let sent = 0;
    for (const item of group) {
      preview.items++;
      if (item.text === undefined) {
        const action = item.malformed === undefined ? 'invalid' : 'not_json';
        preview.unsendable++;
        preview.totals[action]++;
        keep({
          position: item.position,
          line: item.line,
          external_id: item.malformed === undefined ? item.externalId : null,
          action,
          changes: [],
          diff: [],
          errors: unsentErrors(item),
          warnings: [],
        });
        continue;
      }
      const entry = answer?.data[sent++];
      if (!entry) continue;
      preview.totals[entry.action]++;
      const place = (found: ItemError[]) =>
        item.locate === undefined ? found : placeErrors(found, item.locate);
      const { warnings = [], ...verdict } = entry;
      keep({
        ...verdict,
        errors: place(entry.errors),
        warnings: place(warnings),
        position: item.position,
        line: item.line,
      });
    }
    onProgress(preview);
  }
  return preview;
}
