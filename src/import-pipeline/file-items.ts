import { malformedJsonError } from './file-format.ts';
import { JsonStreamError, splitJsonArray } from './json-splitter.ts';
import type { FieldError } from './problem-answer.ts';
import type { SheetRow } from '../spreadsheets/csv-rows.ts';
import { numberedSheetItems } from '../spreadsheets/sheet-converter.ts';
import { placeErrors, type SheetItem } from '../spreadsheets/sheet-items.ts';

/**
 * One item of a file, at its 0-based `position` among the items, starting on `line` (a spreadsheet's
 * row): its JSON text, or why it cannot be sent (not JSON; errors found in a spreadsheet's cells).
 * A spreadsheet's item tells where each field of it is (`locate`), so errors can name row and column.
 */
export type SourceItem = { position: number; line: number; locate?: SheetItem['locate'] } & (
  | { text: string; malformed?: undefined; cellErrors?: undefined }
  | { text?: undefined; malformed: string; cellErrors?: undefined }
  | {
      text?: undefined;
      malformed?: undefined;
      cellErrors: FieldError[];
      /** The product's id, to name the item in the errors and preview files. */
      externalId: string | null;
    }
);

/** The errors of an item that is not sent: that it is not JSON, or what its cells hold wrongly (placed). */
export function unsentErrors(item: SourceItem & { text?: undefined }): FieldError[] {
  if (item.malformed === undefined) return item.cellErrors;
  return [malformedJsonError(item.line, item.malformed)];
}

/**
 * What is cut from both ends of a JSON Lines line: JSON's own white space (RFC 8259 §2), and a byte
 * order mark at its start. The one rule for blank lines: a line of nothing else is no item. Other
 * Unicode spaces (U+00A0, U+2028) are kept, so such a line is `malformed_json`, as JSON.parse says.
 */
const OUTER_WHITESPACE = /^[ \t\r\n\uFEFF]+|[ \t\r\n]+$/g;

/** The lines of `chunks`, ended by LF, CRLF or a lone CR (as Node's readline reads them). */
export async function* textLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  const breaks = /\r\n|\n|\r/g;
  let rest = '';
  for await (const chunk of chunks) {
    const text = rest + chunk;
    let start = 0;
    breaks.lastIndex = 0;
    for (let found = breaks.exec(text); found !== null; found = breaks.exec(text)) {
      // A CR at the end may be the first half of a CRLF that the next chunk finishes.
      if (found[0] === '\r' && found.index === text.length - 1) break;
      yield text.slice(start, found.index);
      start = breaks.lastIndex;
    }
    rest = text.slice(start);
  }
  if (rest !== '') yield rest.replace(/\r$/, '');
}

/** Why `text` is not one JSON value, or undefined when it is. */
function jsonDefect(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The items of a JSON Lines text, one per non-blank line; a line that is not JSON is yielded as
 * malformed (never sent; `invalid` with `malformed_json` in a preview).
 */
export async function* jsonLineItems(chunks: AsyncIterable<string>): AsyncGenerator<SourceItem> {
  let position = 0;
  let line = 0;
  for await (const raw of textLines(chunks)) {
    line++;
    const text = raw.replace(OUTER_WHITESPACE, '');
    if (text === '') continue;
    const malformed = jsonDefect(text);
    yield malformed === undefined ? { position, line, text } : { position, line, malformed };
    position++;
  }
}

/**
 * The items of a JSON text, streamed out of its top-level array. An element that is not valid JSON on
 * its own (`{"a" 1}`) is yielded as malformed; a defect in the structure around the elements (an
 * unbalanced bracket, text after the array) throws, since nothing after it can be read: a text that
 * looks like JSON Lines says so, `jsonLinesHint` telling how to read it as such.
 */
export async function* jsonArrayItems(
  chunks: AsyncIterable<string>,
  jsonLinesHint: string,
): AsyncGenerator<SourceItem> {
  let position = 0;
  try {
    for await (const { text, line } of splitJsonArray(chunks)) {
      const malformed = jsonDefect(text);
      yield malformed === undefined ? { position, line, text } : { position, line, malformed };
      position++;
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError && error.looksLikeJsonLines)) throw error;
    throw new Error(`${error.message} (${jsonLinesHint})`, { cause: error });
  }
}

/** A spreadsheet's items by the shared converter: each item's text, or its cells' errors (placed), with its row and `locate`. */
export async function* sheetFileItems(rows: AsyncIterable<SheetRow>): AsyncGenerator<SourceItem> {
  for await (const { position, row, text, externalId, cellErrors, locate } of numberedSheetItems(rows)) {
    yield cellErrors.length === 0
      ? { position, line: row, text, locate }
      : { position, line: row, cellErrors: placeErrors(cellErrors, locate), externalId, locate };
  }
}
