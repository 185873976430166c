import { ApiError, call } from '../api.ts';
import type { FieldError, Preview, PreviewEntry } from '../api-types.ts';
import { inGroups, readFileItems } from './file-items.ts';
import { envelope, SUBMISSION_SIZE } from './submit-groups.ts';

/** An entry of the preview table: the service's verdict, or `not_json` for a line the page could not read. */
export interface PreviewRow {
  position: number;
  line: number;
  external_id: string | null;
  action: PreviewEntry['action'] | 'not_json';
  changes: string[];
  /** The values of `changes` (CONTRACT §11.2): what the table shows as `from → to` and "added". */
  diff: PreviewEntry['diff'];
  /** The service's errors; for a line that is not JSON, the command-line client's `malformed_json`. */
  errors: Array<Omit<FieldError, 'code'> & { code: string }>;
}

/** A whole file's preview: totals over every item, and the rows worth showing. */
export interface FilePreview {
  items: number;
  totals: Record<PreviewRow['action'], number>;
  rows: PreviewRow[];
  /** Why the service could not preview (the route missing, a refusal), when it could not. */
  unavailable: string | null;
}

/** Rows kept for the table: the first ones, and every invalid one up to a bound. */
const FIRST_ROWS = 200;
const MAX_INVALID_ROWS = 1000;

/**
 * Previews a file (CONTRACT §10.3) group by group as it is read, calling `onProgress` after each.
 * Items that are not JSON are counted here; the service never sees them.
 */
export async function previewFile(
  file: File,
  onProgress: (preview: FilePreview) => void,
): Promise<FilePreview> {
  const preview: FilePreview = {
    items: 0,
    totals: { create: 0, update: 0, unchanged: 0, invalid: 0, not_json: 0 },
    rows: [],
    unavailable: null,
  };
  const keep = (row: PreviewRow) => {
    const bad = row.action === 'invalid' || row.action === 'not_json';
    if (row.position < FIRST_ROWS || (bad && preview.rows.length < FIRST_ROWS + MAX_INVALID_ROWS))
      preview.rows.push(row);
  };
  for await (const group of inGroups(readFileItems(file), SUBMISSION_SIZE)) {
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
      if (item.malformed !== undefined) {
        preview.totals.not_json++;
        keep({
          position: item.position,
          line: item.line,
          external_id: null,
          action: 'not_json',
          changes: [],
          diff: [],
          errors: [
            {
              field: '',
              code: 'malformed_json',
              message: `Line ${item.line} is not JSON: ${item.malformed}`,
            },
          ],
        });
        continue;
      }
      const entry = answer?.data[sent++];
      if (!entry) continue;
      preview.totals[entry.action]++;
      keep({ ...entry, position: item.position, line: item.line });
    }
    onProgress(preview);
  }
  return preview;
}
