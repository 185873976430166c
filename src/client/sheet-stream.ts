import { csvEncodingRefusal, csvRows, type SheetRow } from '../spreadsheets/csv-rows.ts';
import { openXlsxWorkbook } from '../spreadsheets/xlsx-rows.ts';
import { checkSheet } from '../spreadsheets/sheet-converter.ts';
import { sheetFileItems, type SourceItem } from '../import-pipeline/file-items.ts';
import { TextEncodingError } from '../spreadsheets/text-encoding.ts';
import { openFileSource } from './file-source.ts';
import { fileBytes, fileText } from './file-text.ts';

/** The spreadsheet forms the client reads (docs/reference.md §11.5). */
export type SheetFormat = 'csv' | 'xlsx';

/** The rows of a CSV `file`, read from the disk as they are needed; `encoding` is `--encoding`. */
async function* csvRowsOf(file: string, encoding?: string): AsyncGenerator<SheetRow> {
  try {
    yield* csvRows(fileText(fileBytes(file), 'csv', encoding));
  } catch (error) {
    if (!(error instanceof TextEncodingError)) throw error;
    // Read again up to the byte, to name its row and column (docs/spreadsheets.md#encodings).
    throw await csvEncodingRefusal(error, () =>
      fileText(fileBytes(file, { before: error.offset }), 'csv', error.encoding),
    );
  }
}

/**
 * The items of a CSV or XLSX file, by the shared converter (`sheetFileItems`): each item's text, or
 * its cells' errors placed at their row and column. The file is read twice, both times
 * streamed: first to refuse it for a layout defect (`SheetLayoutError`, naming row and column; a byte
 * its encoding cannot read is one) before any item is handed on, so nothing of a refused file is
 * sent; then for its items. An XLSX workbook is opened once for both readings, so its shared strings
 * are read and held once. A reader that sends nothing may skip the first reading
 * (`checkFirst: false`): its items then end with the same error at the first defect.
 */
export async function* readSheetItems(
  file: string,
  format: SheetFormat,
  { checkFirst = true, encoding }: { checkFirst?: boolean; encoding?: string } = {},
): AsyncGenerator<SourceItem> {
  if (format === 'csv') {
    if (checkFirst) await checkSheet(csvRowsOf(file, encoding));
    yield* sheetFileItems(csvRowsOf(file, encoding));
    return;
  }
  const source = await openFileSource(file);
  try {
    const workbook = await openXlsxWorkbook(source);
    if (checkFirst) await checkSheet(workbook.rows());
    yield* sheetFileItems(workbook.rows());
  } finally {
    await source.close();
  }
}
