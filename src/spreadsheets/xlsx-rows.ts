import type { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import type { SheetRow } from './csv-rows.ts';
import { xlsxRowCells } from './xlsx-cells.ts';

/**
 * The rows of an XLSX file's first sheet, read with `exceljs`'s streaming reader: the sheet's XML is
 * parsed as it is unzipped, so a 100,000-row file is read holding a row at a time (and the shared
 * strings table, which the format keeps apart from the sheet). Node only: the dashboard reads XLSX
 * with `exceljs`'s browser build in a Web Worker (`ui/src/import/xlsx-worker.ts`). Row numbers are the sheet's, so an empty row is skipped and counted.
 */
export async function* xlsxRows(input: string | Readable): AsyncGenerator<SheetRow> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    worksheets: 'emit',
    entries: 'emit',
  });
  for await (const sheet of workbook) {
    for await (const row of sheet as AsyncIterable<ExcelJS.Row>) {
      yield { row: row.number, cells: xlsxRowCells(row.values as ExcelJS.CellValue[]) };
    }
    // The first sheet only (CONTRACT §11.4): the others are left unread.
    return;
  }
}
