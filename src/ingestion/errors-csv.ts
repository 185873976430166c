import type { ItemFailure } from '../validation/item-errors.ts';

/**
 * A batch's errors as CSV (docs/reference.md §10.4): RFC 4180, one row per error of every failed item, lines
 * ending in CRLF. Values are written exactly as stored: a cell starting with `=`, `+`, `-` or `@`
 * is not altered (no leading `'`), since the file is data for tools and a changed value would no
 * longer match the JSON errors page; docs/error-reports.md tells spreadsheet users how to open it.
 */

/** The header row's columns, in order. */
export const ERRORS_CSV_COLUMNS = ['index', 'external_id', 'sku', 'field', 'code', 'message'] as const;

/** One field: quoted, with quotes doubled, when it holds a comma, a quote, CR or LF (RFC 4180 §2). */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

const csvRow = (fields: readonly string[]) => `${fields.map(csvField).join(',')}\r\n`;

/** The rows of one page of failed items; a null external_id or sku is an empty field. */
export function errorsCsvRows(page: readonly ItemFailure[]): string {
  let rows = '';
  for (const item of page) {
    for (const error of item.errors) {
      rows += csvRow([
        String(item.index),
        item.external_id ?? '',
        item.sku ?? '',
        error.field,
        error.code,
        error.message,
      ]);
    }
  }
  return rows;
}

/** The whole file, a page at a time: the header row, then each page's rows as it is read. */
export async function* errorsCsv(pages: AsyncIterable<readonly ItemFailure[]>): AsyncGenerator<string> {
  yield csvRow(ERRORS_CSV_COLUMNS);
  for await (const page of pages) {
    const rows = errorsCsvRows(page);
    if (rows !== '') yield rows;
  }
}
