import { parse } from 'csv-parse';
import { unguardFormula, type SheetCell } from './sheet-cells.ts';

/** A row of a spreadsheet: its number (the header is row 1) and its cells, left to right. */
export interface SheetRow {
  row: number;
  cells: SheetCell[];
}

/** The CSV separator (CONTRACT §11.5): `,`, or `;` when the header row holds no `,`. */
export function csvSeparator(start: string): ',' | ';' {
  const newline = start.search(/[\r\n]/);
  const header = newline === -1 ? start : start.slice(0, newline);
  return !header.includes(',') && header.includes(';') ? ';' : ',';
}

const QUOTE = 0x22;

/**
 * The cells of a CSV record: an empty field unquoted is an empty cell (null, the field absent), `""`
 * is the empty string (CONTRACT §11.5); a formula guard written by the export is undone (`'=x` → `=x`).
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
 * The rows of a CSV text fed in chunks (UTF-8 with or without BOM, RFC 4180 quoting, so a quoted
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
