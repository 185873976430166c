import { EventEmitter, once } from 'node:events';
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

/** A writable stream's state, as Node's streams and `readable-stream` 2 (archiver's) both keep it. */
type WritableWithState = EventEmitter & { _writableState?: { needDrain?: boolean } };

/**
 * The stream that takes the sheet's XML into the zip, once the zip has started its entry: exceljs's
 * sheet stream writes into it without waiting for it (its `StreamBuf` ignores `write`'s answer), so
 * when compressing falls behind the rows, their XML piles up there: an export of 100,000 products
 * grew the service by 300 MiB, against 50 MiB for 11,111. It is reached through exceljs's internals
 * (4.4: the sheet's `stream`, whose `pipes` hold archiver's input stream for the entry); when they are
 * not found, the export runs without this wait.
 */
function sheetEntryInput(sheet: ExcelJS.Worksheet): WritableWithState | undefined {
  const input = (sheet as unknown as { stream?: { pipes?: unknown[] } }).stream?.pipes?.[0];
  return input instanceof EventEmitter ? (input as WritableWithState) : undefined;
}

/**
 * Resolves when `stream` emits 'drain' or closes, or `out` closes (or either fails: `once` rejects on
 * 'error', and the writer's own handlers report it), leaving no listener behind: the wait comes once a
 * page, and an entry stream that ends without draining cannot hold the export for ever.
 */
async function drainedOrClosed(stream: EventEmitter, out: PassThrough): Promise<void> {
  const settled = new AbortController();
  const event = (emitter: EventEmitter, name: string) =>
    once(emitter, name, { signal: settled.signal }).then(
      () => undefined,
      () => undefined,
    );
  await Promise.race([event(stream, 'drain'), event(stream, 'close'), event(out, 'close')]);
  settled.abort();
}

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
      const entry = sheetEntryInput(sheet);
      if (entry?._writableState?.needDrain) await drainedOrClosed(entry, out);
      if (out.writableNeedDrain) await drainedOrClosed(out, out);
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
