import { ApiError, call } from '../api.ts';
import type { Preview } from '../api-types.ts';
import type { FilePreview, PreviewRow } from './preview-rows.ts';
import { previewItems } from '../../../src/import-pipeline/preview-items.ts';
import type { ImportFile } from './file-items.ts';

export type { FilePreview, ItemError, PreviewRow } from './preview-rows.ts';

/** Why the service cannot preview, for an answer that says so; a failure to retry later is thrown. */
function unavailable(error: unknown): string {
  if (!(error instanceof ApiError) || error.status === 0 || error.status >= 500 || error.status === 429)
    throw error;
  return error.status === 404 || error.status === 405
    ? 'This service has no preview route (docs/api.md); the file can still be submitted.'
    : error.message;
}

/**
 * Previews a file (docs/api.md, "POST /products/ingestions/preview") through the import pipeline's
 * `previewItems`, batch by batch as a submission cuts them (1000 items, 30 MiB), calling `onProgress`
 * after each. Items that are not JSON, or whose spreadsheet cells cannot be read, are
 * `invalid` here, as in the command line's dry run; the service never sees them. A spreadsheet's
 * errors are placed at the row and column of their field. Rows are in file order.
 */
export async function previewFile(
  source: ImportFile,
  onProgress: (preview: FilePreview) => void,
): Promise<FilePreview> {
  const preview: FilePreview = {
    items: 0,
    totals: { create: 0, update: 0, unchanged: 0, invalid: 0 },
    warnings: 0,
    unsendable: 0,
    invalidPositions: new Set(),
    rows: [],
    unavailable: null,
  };
  const keep = (row: PreviewRow) => {
    preview.items++;
    preview.totals[row.action]++;
    if (row.action === 'invalid') preview.invalidPositions.add(row.position);
    preview.warnings += row.warnings.length;
    // Every row is kept: the table pages through them and filters them (preview-filter.ts). A row of
    // an unchanged item holds no diff, so even 100,000 of them are a few megabytes.
    preview.rows.push(row);
  };
  const ask = async (body: string): Promise<Preview | null> => {
    if (preview.unavailable !== null) return null;
    try {
      const response = await call('/products/ingestions/preview', { method: 'POST', body });
      return (await response.json()) as Preview;
    } catch (error) {
      preview.unavailable = unavailable(error);
      return null;
    }
  };
  for await (const settled of previewItems(source.items(), ask)) {
    for (const item of settled) {
      const { position, line } = item;
      switch (item.kind) {
        case 'unsent':
          preview.unsendable++;
          keep({
            position,
            line,
            external_id: item.externalId,
            action: 'invalid',
            changes: [],
            diff: [],
            errors: item.errors,
            warnings: [],
          });
          break;
        case 'previewed': {
          const { warnings = [], ...verdict } = item.entry;
          keep({ ...verdict, warnings, position, line });
          break;
        }
        case 'unpreviewed':
          // Not previewed (no route, no right): counted, with no verdict to show.
          preview.items++;
          break;
      }
    }
    onProgress(preview);
  }
  preview.rows.sort((a, b) => a.position - b.position);
  onProgress(preview);
  return preview;
}
