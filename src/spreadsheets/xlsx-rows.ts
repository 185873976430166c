import type { ByteSource } from './byte-source.ts';
import type { SheetRow } from './csv-rows.ts';
import { readZipDirectory } from './zip-directory.ts';
import { findWorkbookParts } from './xlsx-workbook.ts';
import { readSharedStrings } from './xlsx-shared-strings.ts';
import { SharedStringTable } from './shared-string-table.ts';
import { sheetRows } from './xlsx-sheet-rows.ts';

/** How an XLSX file is read; the default suits every file, tests read in tiny pieces. */
export interface XlsxReadOptions {
  /** Compressed bytes read and inflated at a time (default 64 KiB). */
  pieceBytes?: number;
}

/** A workbook opened for its first sheet's rows, which can be read as often as needed. */
export interface XlsxWorkbook {
  /** The first sheet's name, as its tab shows it. */
  sheetName: string;
  /** The first sheet's rows, read from the file again at each call, a row at a time. */
  rows(): AsyncGenerator<SheetRow>;
}

/**
 * Opens an XLSX file for the rows of its first sheet in tab order (docs/spreadsheets.md, "The XLSX
 * reader"), for the command-line client and the dashboard alike: the zip's directory is read from its
 * end, the workbook's parts are found through its relationships, and the shared strings are read into
 * a compact table (the one thing held); each reading of the rows then inflates and parses the sheet as it
 * goes. Runs in Node and in a browser: no Node module here. Throws `XlsxReadError` for a file it
 * cannot read as a workbook.
 */
export async function openXlsxWorkbook(
  source: ByteSource,
  options: XlsxReadOptions = {},
): Promise<XlsxWorkbook> {
  const zip = await readZipDirectory(source);
  const parts = await findWorkbookParts(zip);
  const shared =
    parts.sharedStrings === null
      ? new SharedStringTable()
      : await readSharedStrings(zip, parts.sharedStrings, options.pieceBytes);
  return { sheetName: parts.sheetName, rows: () => sheetRows(zip, parts.sheet, shared, options.pieceBytes) };
}

/**
 * The rows of an XLSX file's first sheet (`openXlsxWorkbook`, read once). Row numbers are the sheet's,
 * so an empty row is skipped and counted.
 */
export async function* xlsxRows(source: ByteSource, options: XlsxReadOptions = {}): AsyncGenerator<SheetRow> {
  yield* (await openXlsxWorkbook(source, options)).rows();
}
