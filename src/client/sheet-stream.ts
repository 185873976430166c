import { createReadStream } from 'node:fs';
import { csvRows, type SheetRow } from '../spreadsheets/csv-rows.ts';
import { xlsxRows } from '../spreadsheets/xlsx-rows.ts';
import { checkSheet, numberedSheetItems } from '../spreadsheets/sheet-converter.ts';
import type { SheetItem } from '../spreadsheets/sheet-items.ts';
import { openFileSource } from './file-source.ts';

/** The spreadsheet forms the client reads (CONTRACT §11.5). */
export type SheetFormat = 'csv' | 'xlsx';

const READ_CHUNK_BYTES = 256 * 1024;

/** The rows of `file`, read from the disk as they are needed. */
async function* rowsOf(file: string, format: SheetFormat): AsyncGenerator<SheetRow> {
  if (format === 'xlsx') {
    const source = await openFileSource(file);
    try {
      yield* xlsxRows(source);
    } finally {
      await source.close();
    }
    return;
  }
  yield* csvRows(createReadStream(file, { encoding: 'utf8', highWaterMark: READ_CHUNK_BYTES }));
}

/**
 * The items of a CSV or XLSX file, by the shared converter. The file is read twice, both times
 * streamed: first to refuse it for a layout defect (`SheetLayoutError`, naming row and column)
 * before any item is handed on, so nothing of a refused file is sent; then for its items. A reader
 * that sends nothing may skip the first reading (`checkFirst: false`): its items then end with the
 * same error at the first defect.
 */
export async function* readSheetItems(
  file: string,
  format: SheetFormat,
  { checkFirst = true }: { checkFirst?: boolean } = {},
): AsyncGenerator<SheetItem & { position: number }> {
  if (checkFirst) await checkSheet(rowsOf(file, format));
  yield* numberedSheetItems(rowsOf(file, format));
}
