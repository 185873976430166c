import { ApiError, call } from '../api.ts';
import type { Preview } from '../api-types.ts';
import type { FilePreview, ItemError, PreviewRow } from './preview-rows.ts';
import { placeErrors, type SheetItem } from '../../../src/spreadsheets/sheet-items.ts';
import { batchesOf, envelope, type WellFormedItem } from '../../../src/import-pipeline/batches.ts';
import { unsentErrors } from '../../../src/import-pipeline/file-items.ts';
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
 * Previews a file (docs/api.md, "POST /products/ingestions/preview") batch by batch as it is read, cut
 * as a submission cuts it (the import pipeline's `batchesOf`: 1000 items, 30 MiB), calling
 * `onProgress` after each. Items that are not JSON, or whose spreadsheet cells cannot be read, are
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
  /** Each sent item's line and place, until its batch's answer names it. */
  const sent = new Map<number, { line: number; locate: SheetItem['locate'] | undefined }>();
  async function* wellFormed(): AsyncGenerator<WellFormedItem> {
    for await (const item of source.items()) {
      if (item.text !== undefined) {
        sent.set(item.position, { line: item.line, locate: item.locate });
        yield { position: item.position, text: item.text };
        continue;
      }
      preview.unsendable++;
      keep({
        position: item.position,
        line: item.line,
        external_id: item.malformed === undefined ? item.externalId : null,
        action: 'invalid',
        changes: [],
        diff: [],
        errors: unsentErrors(item),
        warnings: [],
      });
    }
  }
  for await (const batch of batchesOf(wellFormed())) {
    let answer: Preview | null = null;
    if (preview.unavailable === null) {
      try {
        const response = await call('/products/ingestions/preview', {
          method: 'POST',
          body: envelope(batch.texts),
        });
        answer = (await response.json()) as Preview;
      } catch (error) {
        preview.unavailable = unavailable(error);
      }
    }
    for (const [index, position] of batch.positions.entries()) {
      const { line, locate } = sent.get(position) ?? { line: 0, locate: undefined };
      sent.delete(position);
      const entry = answer?.data[index];
      if (!entry) {
        // Not previewed (no route, no right): counted, with no verdict to show.
        preview.items++;
        continue;
      }
      const place = (found: ItemError[]) => (locate === undefined ? found : placeErrors(found, locate));
      const { warnings = [], ...verdict } = entry;
      keep({ ...verdict, errors: place(entry.errors), warnings: place(warnings), position, line });
    }
    preview.rows.sort((a, b) => a.position - b.position);
    onProgress(preview);
  }
  onProgress(preview);
  return preview;
}
