/**
 * The dashboard's XLSX reader, run in a Web Worker: `exceljs`'s browser build reads only a whole
 * workbook (its streaming reader needs Node's streams and file system), which for 100,000 rows is
 * seconds of work that would freeze the page. Here it freezes nothing; the page pulls the first
 * sheet's rows a slice at a time, as cells the shared converter takes (`src/spreadsheets/`). The
 * workbook is dropped once its rows are taken, so the worker holds only the cells' values.
 */
import ExcelJS from 'exceljs';
import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';
import { xlsxRowCells } from '../../../src/spreadsheets/xlsx-cells.ts';
import { ROWS_PER_MESSAGE, type XlsxAnswer, type XlsxRequest } from './xlsx-protocol.ts';

let rows: SheetRow[] = [];

const answer = (message: XlsxAnswer) => postMessage(message);

/** The first sheet's rows, numbered as the sheet numbers them (an empty row is skipped and counted). */
async function readRows(file: File): Promise<SheetRow[]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(await file.arrayBuffer());
  const sheet = workbook.worksheets[0];
  const read: SheetRow[] = [];
  sheet?.eachRow((row, number) => {
    read.push({ row: number, cells: xlsxRowCells(row.values as ExcelJS.CellValue[]) });
  });
  return read;
}

addEventListener('message', (event: MessageEvent<XlsxRequest>) => {
  const request = event.data;
  switch (request.type) {
    case 'open': {
      const started = performance.now();
      readRows(request.file).then(
        (read) => {
          rows = read;
          answer({
            type: 'opened',
            rows: rows.length,
            milliseconds: Math.round(performance.now() - started),
          });
        },
        (error: unknown) =>
          answer({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
      );
      break;
    }
    case 'rows': {
      const end = request.from + ROWS_PER_MESSAGE;
      answer({ type: 'rows', id: request.id, rows: rows.slice(request.from, end), done: end >= rows.length });
      break;
    }
  }
});
