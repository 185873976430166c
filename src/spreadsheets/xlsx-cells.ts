import type ExcelJS from 'exceljs';
import type { SheetCell } from './sheet-cells.ts';
import { unescapeXlsxText } from './xlsx-escapes.ts';

/**
 * A cell as `exceljs` reads it, as the converter takes it: numbers as they are, text with its
 * `_xHHHH_` escapes undone, the shown text of rich text and links, a formula's last result, and
 * booleans and dates as text (no column of the layout holds them, so the service names the error).
 * Shared by the command-line client's streaming reader and the dashboard's, which use different
 * builds of `exceljs` but the same cell values.
 */
export function xlsxCell(value: ExcelJS.CellValue): SheetCell {
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

/** The cells of an `exceljs` row's `values`, which are 1-based (index 0 is always empty). */
export function xlsxRowCells(values: readonly ExcelJS.CellValue[]): SheetCell[] {
  return Array.from({ length: Math.max(values.length - 1, 0) }, (_, i) => xlsxCell(values[i + 1]));
}
