import { stringify } from 'csv-stringify/sync';
import { guardFormula, plainDecimal } from '../spreadsheets/sheet-cells.ts';
import { SHEET_COLUMNS } from '../spreadsheets/sheet-layout.ts';
import type { StoredProduct } from './ingest-parts.ts';
import { productRows, TEXT_COLUMN, type ExportCell } from './sheet-rows.ts';

/**
 * RFC 4180 records (CRLF, quotes where a cell needs them), an empty string as `""` so it reads back
 * as an empty string rather than an empty cell (docs/reference.md §11.5), and the BOM that makes Excel read
 * the file as UTF-8. A cell holding a line break is quoted by pattern: with CRLF records,
 * csv-stringify 6.6 quotes a cell holding `\r\n` but not one holding a bare `\n`, which splits the row.
 */
const CSV_OPTIONS = { record_delimiter: 'windows', quoted_match: [/^$/, /[\r\n]/] };

/** A cell as CSV writes it: text guarded against formula injection, numbers as plain decimals, null empty. */
const csvCell = (cell: ExportCell, index: number): string | null => {
  if (cell === null) return null;
  if (typeof cell === 'number') return plainDecimal(cell);
  return TEXT_COLUMN[index] ? guardFormula(cell) : cell;
};

/**
 * The catalog as CSV in the spreadsheet layout: the header row with every column, then each page of
 * products as one chunk of rows, written by `csv-stringify`.
 */
export async function* csvChunks(pages: AsyncIterable<readonly StoredProduct[]>): AsyncGenerator<string> {
  yield stringify([SHEET_COLUMNS], { ...CSV_OPTIONS, bom: true });
  for await (const page of pages) {
    const rows = page.flatMap((product) => productRows(product).map((row) => row.map(csvCell)));
    if (rows.length > 0) yield stringify(rows, CSV_OPTIONS);
  }
}
