import { parse } from 'csv-parse';
import { unguardFormula, type SheetCell } from './sheet-cells.ts';
import { SheetLayoutError } from './sheet-layout.ts';
import type { TextEncodingError } from './text-encoding.ts';

/** A row of a spreadsheet: its number (the header is row 1) and its cells, left to right. */
export interface SheetRow {
  row: number;
  cells: SheetCell[];
}

/**
 * The CSV separator (docs/spreadsheets.md): `,`; `;` when the header row holds no `,` (Excel in
 * locales with a decimal comma); a tab when it holds neither (Excel's "Unicode Text").
 */
export function csvSeparator(start: string): ',' | ';' | '\t' {
  const newline = start.search(/[\r\n]/);
  const header = newline === -1 ? start : start.slice(0, newline);
  if (header.includes(',')) return ',';
  if (header.includes(';')) return ';';
  return header.includes('\t') ? '\t' : ',';
}

const QUOTE = 0x22;

/**
 * The cells of a CSV record: an empty field unquoted is an empty cell (null, the field absent), `""`
 * is the empty string (docs/reference.md §11.5); a formula guard written by the export is undone (`'=x` → `=x`).
 *
 * Which empty fields were quoted is read from the record's raw text (csv-parse's `raw` option) rather
 * than from a `cast` hook: csv-parse builds an info object for every field it casts, which made
 * reading a CSV seven times slower (docs/performance.md). The raw text starts with the first field, and
 * each field's raw length follows from its value (csv-parse neither trims nor relaxes quotes here):
 * unquoted, its own length; quoted, two more plus one per `"` it holds, each written doubled. So the
 * raw text is walked field by field without parsing it again, and only when it holds a `""`, the one
 * way an empty field can be quoted.
 */
function csvCells(record: readonly string[], raw: string, separator: string): SheetCell[] {
  const cells = new Array<SheetCell>(record.length);
  const mayQuoteEmpty = raw.includes('""');
  let at = 0;
  for (let index = 0; index < record.length; index++) {
    const field = record[index]!;
    const quoted = mayQuoteEmpty && raw.charCodeAt(at) === QUOTE;
    cells[index] = field === '' ? (quoted ? '' : null) : unguardFormula(field);
    if (mayQuoteEmpty) at += (quoted ? field.length + 2 + quotesIn(field) : field.length) + separator.length;
  }
  return cells;
}

/** How many `"` `text` holds. */
function quotesIn(text: string): number {
  let count = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) count++;
  return count;
}

/** A record as csv-parse hands it over with `raw: true`. */
interface RawRecord {
  record: string[];
  raw: string;
}

/** Characters of text read before the separator is chosen: far more than any header row. */
const HEADER_LOOKAHEAD = 64 * 1024;

/**
 * The rows of a CSV text fed in chunks (decoded by `decodeText`, or text with or without a BOM, RFC 4180 quoting, so a quoted
 * cell may hold the separator, quotes and newlines), read with `csv-parse`: it streams, holds one
 * record at a time, and runs in the browser through its `browser/esm` build. Every record is a row,
 * a blank line too, so row numbers are those a spreadsheet program shows.
 */
export async function* csvRows(chunks: AsyncIterable<string>): AsyncGenerator<SheetRow> {
  const iterator = chunks[Symbol.asyncIterator]();
  let start = '';
  while (start.length < HEADER_LOOKAHEAD && !/[\r\n]/.test(start)) {
    const next = await iterator.next();
    if (next.done) break;
    start += next.value;
  }
  const separator = csvSeparator(start.replace(/^\uFEFF/, ''));
  const parser = parse({ bom: true, delimiter: separator, relax_column_count: true, raw: true });
  // The parser's transform runs inside `write`, so the records of a chunk can be taken at once with
  // `read`: a record per event-loop turn (async iteration with backpressure) was 25 times slower.
  let failure: Error | undefined;
  parser.on('error', (error: Error) => (failure ??= error));
  let row = 0;
  const take = function* (): Generator<SheetRow> {
    if (failure !== undefined) throw failure;
    for (
      let next = parser.read() as RawRecord | null;
      next !== null;
      next = parser.read() as RawRecord | null
    ) {
      row++;
      yield { row, cells: csvCells(next.record, next.raw, separator) };
    }
  };
  try {
    if (start !== '') {
      parser.write(start);
      yield* take();
    }
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      parser.write(next.value);
      yield* take();
    }
    // The last record is parsed when the input ends, by the parser's flush, which is done when the
    // writable side finishes: at once in the browser build's stream library, a tick later in Node's.
    const flushed = new Promise<void>((resolve) => {
      parser.once('finish', resolve);
      parser.once('error', () => resolve());
    });
    parser.end();
    await flushed;
    yield* take();
  } finally {
    // The browser build's stream library has no `destroy`; there, the parser holds nothing to free.
    if (typeof parser.destroy === 'function') parser.destroy();
    await iterator.return?.();
  }
}

/**
 * Where in a CSV a byte its encoding cannot read is (`TextEncodingError`), as the refusal names it:
 * `row 12, column "name": byte 0xE9 at offset 4711 is not UTF-8. …`. `before` is the text of the file
 * up to that byte, read again (the error path only): its rows are counted by the same rules as the
 * file's, and the last one, cut off at the byte, tells the column. In the header row, the column is
 * named by what was read of its cell.
 */
export async function csvEncodingRefusal(
  error: TextEncodingError,
  before: () => AsyncIterable<string>,
): Promise<SheetLayoutError> {
  const place = await lastRow(before, '').catch(async (failure: unknown) => {
    // Cut off inside a quoted cell: closing the quote gives the same rows.
    if ((failure as { code?: string }).code !== 'CSV_QUOTE_NOT_CLOSED') throw failure;
    return lastRow(before, '"');
  });
  let row = place.last?.row ?? 1;
  let index = Math.max(0, (place.last?.cells.length ?? 1) - 1);
  // The byte starts a new record when the text before it ends one.
  if (place.last !== null && place.endsLine) {
    row++;
    index = 0;
  }
  const column = row === 1 ? place.last?.cells[index] : place.header[index];
  return new SheetLayoutError(error.message, row, String(column ?? '').trim(), { cause: error });
}

/** The header's cells and the last row of the CSV text `before()` then `suffix`, and whether it ends a line. */
async function lastRow(
  before: () => AsyncIterable<string>,
  suffix: string,
): Promise<{ header: readonly string[]; last: SheetRow | null; endsLine: boolean }> {
  let header: string[] = [];
  let last: SheetRow | null = null;
  let endsLine = false;
  async function* text(): AsyncGenerator<string> {
    for await (const chunk of before()) {
      if (chunk === '') continue;
      endsLine = /[\r\n]$/.test(chunk);
      yield chunk;
    }
    if (suffix !== '') yield suffix;
  }
  for await (const row of csvRows(text())) {
    if (row.row === 1) header = row.cells.map((cell) => String(cell ?? ''));
    last = row;
  }
  return { header, last, endsLine: endsLine && suffix === '' };
}
