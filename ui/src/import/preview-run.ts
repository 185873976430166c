import { ApiError, call } from '../api.ts';
import type { Preview } from '../api-types.ts';
import type { FilePreview, ItemError, PreviewRow } from './preview-rows.ts';
import { placeErrors } from '../../../src/spreadsheets/sheet-items.ts';
import { malformedJsonError } from '../../../src/client/file-format.ts';
import { inGroups, type FileItem, type ImportFile } from './file-items.ts';
import { envelope, SUBMISSION_SIZE } from './submit-groups.ts';

export type { FilePreview, ItemError, PreviewRow } from './preview-rows.ts';

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
    // Every row is kept: the table pages through them and filters them (preview-filter.ts). A row of
    // an unchanged item holds no diff, so even 100,000 of them are a few megabytes.
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
