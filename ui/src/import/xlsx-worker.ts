/**
 * The dashboard's XLSX reader, run in a Web Worker: the shared reader (`src/spreadsheets/xlsx-rows.ts`,
 * the command-line client's too) reads the chosen File by slices (`Blob.slice`), never whole, so the
 * page neither freezes nor holds the workbook. Opening reads the zip's directory, finds the first
 * sheet and reads the shared strings, which the worker then holds; each reading of the rows inflates
 * and parses the sheet again as the page pulls it, a slice of rows at a time, so only a slice of
 * rows is ever held.
 */
import { blobSource } from '../../../src/spreadsheets/byte-source.ts';
import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';
import { openXlsxWorkbook, type XlsxWorkbook } from '../../../src/spreadsheets/xlsx-rows.ts';
import { XlsxReadError } from '../../../src/spreadsheets/xlsx-read-error.ts';
import { ROWS_PER_MESSAGE, type XlsxAnswer, type XlsxRequest } from './xlsx-protocol.ts';

let workbook: Promise<XlsxWorkbook> | null = null;
/** The readings the page has under way, by cursor. */
const readings = new Map<number, AsyncGenerator<SheetRow>>();

const answer = (message: XlsxAnswer) => postMessage(message);

/** The message the page shows for a file that cannot be read, whatever stopped the reader. */
const messageOf = (error: unknown) =>
  error instanceof XlsxReadError
    ? error.message
    : new XlsxReadError(error instanceof Error ? error.message : String(error)).message;

/** The next slice of reading `cursor`, which starts when it is new. */
async function nextSlice(id: number, cursor: number): Promise<void> {
  let reading = readings.get(cursor);
  if (reading === undefined) {
    reading = (await workbook!).rows();
    readings.set(cursor, reading);
  }
  const rows: SheetRow[] = [];
  while (rows.length < ROWS_PER_MESSAGE) {
    const next = await reading.next();
    if (next.done) {
      readings.delete(cursor);
      return answer({ type: 'rows', id, rows, done: true });
    }
    rows.push(next.value);
  }
  answer({ type: 'rows', id, rows, done: false });
}

addEventListener('message', (event: MessageEvent<XlsxRequest>) => {
  const request = event.data;
  switch (request.type) {
    case 'open': {
      const started = performance.now();
      workbook = openXlsxWorkbook(blobSource(request.file));
      workbook.then(
        (opened) =>
          answer({
            type: 'opened',
            sheetName: opened.sheetName,
            milliseconds: Math.round(performance.now() - started),
          }),
        (error: unknown) => answer({ type: 'failed', message: messageOf(error) }),
      );
      break;
    }
    case 'rows':
      nextSlice(request.id, request.cursor).catch((error: unknown) => {
        readings.delete(request.cursor);
        answer({ type: 'failed', id: request.id, message: messageOf(error) });
      });
      break;
    case 'close':
      void readings.get(request.cursor)?.return(undefined);
      readings.delete(request.cursor);
      break;
  }
});
