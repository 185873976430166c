import { stat } from 'node:fs/promises';
import path from 'node:path';
import { placeErrors, type SheetItem } from '../spreadsheets/sheet-items.ts';
import { TextEncodingError } from '../spreadsheets/text-encoding.ts';
import { fileBytes, fileText } from './file-text.ts';
import { FILE_FORMATS, formatOfName, malformedJsonError, type FileFormat } from './file-format.ts';
import { JsonStreamError, splitJsonArray } from './json-splitter.ts';
import type { FieldError } from './problem-answer.ts';
import { readSheetItems, type SheetFormat } from './sheet-stream.ts';

/**
 * How a file holds its items: one JSON document (an array, or `{"items": [...]}`), a value per line,
 * or a spreadsheet in the layout of CONTRACT §11.5.
 */
export type { FileFormat };

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

/** The file name that means standard input, as in most command-line tools. */
export const STDIN = '-';

const OUTER_WHITESPACE = /^[ \t\r\n\uFEFF]+|[ \t\r\n]+$/g;

/**
 * The format of `file`: `explicit` when given, else `.jsonl`/`.ndjson` → jsonl, `.csv` → csv, `.xlsx` →
 * xlsx, anything else → json.
 */
export function formatOf(file: string, explicit?: string): FileFormat {
  if (explicit !== undefined && (FILE_FORMATS as readonly string[]).includes(explicit))
    return explicit as FileFormat;
  if (explicit !== undefined)
    throw new Error(`--format must be json, jsonl, csv or xlsx, not ${JSON.stringify(explicit)}`);
  return formatOfName(path.basename(file));
}

/** `file` as messages name it. */
export function inputName(file: string): string {
  return file === STDIN ? 'standard input' : file;
}

/**
 * The text of `file` (standard input for `-`), decoded as docs/spreadsheets.md#encodings says (UTF-8
 * unless a byte order mark or `encoding` says otherwise); a byte the encoding cannot read ends it with
 * `TextEncodingError`, naming the line it is on.
 */
async function* openInput(file: string, encoding: string | undefined): AsyncGenerator<string> {
  const bytes = file === STDIN ? (process.stdin as AsyncIterable<Uint8Array>) : fileBytes(file);
  let lineFeeds = 0;
  try {
    for await (const text of fileText(bytes, 'json', encoding)) {
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lineFeeds++;
      yield text;
    }
  } catch (error) {
    if (error instanceof TextEncodingError) throw error.at(`${inputName(file)}, line ${lineFeeds + 1}`);
    throw error;
  }
}

/** The lines of `chunks`, ended by LF, CRLF or a lone CR (as Node's readline reads them). */
async function* textLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
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

/**
 * Reads a JSON or JSON Lines `file` to its end, decoding only, and throws where a byte is not in its
 * encoding: run before anything is sent, as a spreadsheet's layout check is. Standard input and pipes
 * cannot be read twice: they are not checked ahead, and a run reading them stops at such a byte.
 */
async function checkEncoding(file: string, encoding: string | undefined): Promise<void> {
  if (file === STDIN || !(await stat(file)).isFile()) return;
  for await (const _ of openInput(file, encoding)) {
    // decoding only
  }
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

/** The items of a JSONL file (`-`: standard input), one per non-blank line; a line that is not JSON is yielded as malformed. */
export async function* readJsonLines(file: string, encoding?: string): AsyncGenerator<SourceItem> {
  let position = 0;
  let line = 0;
  for await (const raw of textLines(openInput(file, encoding))) {
    line++;
    const text = raw.replace(OUTER_WHITESPACE, '');
    if (text === '') continue;
    const malformed = jsonDefect(text);
    yield malformed === undefined ? { position, line, text } : { position, line, malformed };
    position++;
  }
}

/**
 * The items of a JSON file, streamed out of its top-level array. An element that is not valid JSON on
 * its own (`{"a" 1}`) is yielded as malformed; a defect in the structure around the elements (an
 * unbalanced bracket, text after the array) throws `JsonStreamError`, since nothing after it can be read.
 */
export async function* readJsonArray(file: string, encoding?: string): AsyncGenerator<SourceItem> {
  let position = 0;
  try {
    for await (const { text, line } of splitJsonArray(openInput(file, encoding))) {
      const malformed = jsonDefect(text);
      yield malformed === undefined ? { position, line, text } : { position, line, malformed };
      position++;
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError && error.looksLikeJsonLines)) throw error;
    throw new Error(`${error.message} (if the file is JSON Lines, pass --format jsonl)`, { cause: error });
  }
}

/** The items of a CSV or XLSX file: each item's text, or its cells' errors, with its row and `locate`. */
async function* readSheet(
  file: string,
  format: SheetFormat,
  options: { checkFirst: boolean; encoding: string | undefined },
): AsyncGenerator<SourceItem> {
  for await (const { position, row, text, externalId, cellErrors, locate } of readSheetItems(
    file,
    format,
    options,
  )) {
    yield cellErrors.length === 0
      ? { position, line: row, text, locate }
      : { position, line: row, cellErrors: placeErrors(cellErrors, locate), externalId, locate };
  }
}

/**
 * The items of `file` (`-`: standard input, JSON or JSON Lines) in `format`, its text in `encoding`
 * (`--encoding`; else UTF-8, or UTF-16 by a byte order mark). A spreadsheet is first read whole for
 * its layout, and a JSON file for its encoding, so that a refused file sends nothing;
 * `checkSheetFirst: false` skips that reading for a reader that has just done it or sends nothing.
 */
export async function* readItems(
  file: string,
  format: FileFormat,
  { checkSheetFirst = true, encoding }: { checkSheetFirst?: boolean; encoding?: string } = {},
): AsyncGenerator<SourceItem> {
  switch (format) {
    case 'jsonl':
      if (checkSheetFirst) await checkEncoding(file, encoding);
      yield* readJsonLines(file, encoding);
      return;
    case 'json':
      if (checkSheetFirst) await checkEncoding(file, encoding);
      yield* readJsonArray(file, encoding);
      return;
    case 'csv':
    case 'xlsx':
      yield* readSheet(file, format, { checkFirst: checkSheetFirst, encoding });
  }
}
