import type { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import type { SheetRow } from './csv-rows.ts';
import type { SheetCell } from './sheet-cells.ts';
import { unescapeXlsxText } from './xlsx-escapes.ts';

/**
 * A cell as `exceljs` reads it, as the converter takes it: numbers as they are, text with its
 * `_xHHHH_` escapes undone, the shown text of rich text and links, a formula's last result, and
 * booleans and dates as text (no column of the layout holds them, so the service names the error).
 */
function xlsxCell(value: ExcelJS.CellValue): SheetCell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return unescapeXlsxText(value);
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return value.toISOString();
  if ('richText' in value) return unescapeXlsxText(value.richText.map((run) => run.text).join(''));
  if ('hyperlink' in value) return xlsxCell(value.text);
  if ('result' in value) return xlsxCell(value.result ?? null);
  if ('error' in value) return String(value.error);
  return null;
}

/**
 * The rows of an XLSX file's first sheet, read with `exceljs`'s streaming reader: the sheet's XML is
 * parsed as it is unzipped, so a 100,000-row file is read holding a row at a time (and the shared
 * strings table, which the format keeps apart from the sheet). Node only: the dashboard reads XLSX
 * with `exceljs`'s browser build. Row numbers are the sheet's, so an empty row is skipped and counted.
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
      const values = row.values as ExcelJS.CellValue[];
      // `values` is 1-based: index 0 is always empty.
      yield {
        row: row.number,
        cells: Array.from({ length: Math.max(values.length - 1, 0) }, (_, i) => xlsxCell(values[i + 1])),
      };
    }
    // The first sheet only (CONTRACT §11.4): the others are left unread.
    return;
  }
}
