import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import ExcelJS from 'exceljs';
import { SHEET_COLUMNS } from '../spreadsheets/sheet-layout.ts';
import { escapeXlsxText } from '../spreadsheets/xlsx-escapes.ts';
import type { StoredProduct } from './ingest-parts.ts';
import { productRows, TEXT_COLUMN, type ExportCell } from './sheet-rows.ts';

/** Excel's number format for text: a cell typed into later stays text (`00123` keeps its zeros). */
const TEXT_FORMAT = '@';

const xlsxCell = (cell: ExportCell): ExcelJS.CellValue =>
  typeof cell === 'string' ? escapeXlsxText(cell) : cell;

/**
 * The catalog as an XLSX workbook, its first sheet in the spreadsheet layout, with `exceljs`'s
 * streaming writer: each page's rows are committed (written into the zip and dropped) before the
 * next page is read, and the next page waits while the zipped bytes are not taken, so memory stays
 * flat whatever the catalog's size. Texts are text cells in a text-formatted column (SKUs and ids
 * keep leading zeros), numbers numeric cells.
 */
export async function* xlsxChunks(
  pages: AsyncIterable<readonly StoredProduct[]>,
): AsyncGenerator<Uint8Array> {
  const out = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out,
    useStyles: true,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet('products');
  sheet.columns = SHEET_COLUMNS.map((column, index) => ({
    key: column,
    style: TEXT_COLUMN[index] ? { numFmt: TEXT_FORMAT } : {},
  }));
  sheet.addRow([...SHEET_COLUMNS]).commit();
  let failure: Error | undefined;
  const write = (async () => {
    for await (const page of pages) {
      for (const product of page) {
        for (const row of productRows(product)) sheet.addRow(row.map(xlsxCell)).commit();
      }
      // A client that went away destroyed the stream: no 'drain' will come, and no page is needed.
      if (out.writableNeedDrain) await Promise.race([once(out, 'drain'), once(out, 'close')]);
      if (out.destroyed) return;
    }
    sheet.commit();
    await workbook.commit();
  })().catch((error: unknown) => {
    failure = error instanceof Error ? error : new Error('the XLSX writer failed', { cause: error });
    out.destroy(failure);
  });
  try {
    for await (const chunk of out as AsyncIterable<Uint8Array>) yield chunk;
  } finally {
    out.destroy();
    await write;
  }
  if (failure !== undefined) throw failure;
}
