import { createReadStream } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { placeErrors, type SheetItem } from '../spreadsheets/sheet-items.ts';
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

const READ_CHUNK_BYTES = 256 * 1024;
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

/** A text stream of `file`: standard input for `-`, else the path opened (a FIFO or device as well). */
function openInput(file: string): NodeJS.ReadableStream & { destroy(): void } {
  if (file === STDIN) return process.stdin.setEncoding('utf8');
  return createReadStream(file, { encoding: 'utf8', highWaterMark: READ_CHUNK_BYTES });
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
export async function* readJsonLines(file: string): AsyncGenerator<SourceItem> {
  const input = openInput(file);
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let position = 0;
  let line = 0;
  try {
    for await (const raw of lines) {
      line++;
      const text = raw.replace(OUTER_WHITESPACE, '');
      if (text === '') continue;
      const malformed = jsonDefect(text);
      yield malformed === undefined ? { position, line, text } : { position, line, malformed };
      position++;
    }
  } finally {
    lines.close();
    input.destroy();
  }
}

/**
 * The items of a JSON file, streamed out of its top-level array. An element that is not valid JSON on
 * its own (`{"a" 1}`) is yielded as malformed; a defect in the structure around the elements (an
 * unbalanced bracket, text after the array) throws `JsonStreamError`, since nothing after it can be read.
 */
export async function* readJsonArray(file: string): AsyncGenerator<SourceItem> {
  const input = openInput(file);
  let position = 0;
  try {
    for await (const { text, line } of splitJsonArray(input as AsyncIterable<string>)) {
      const malformed = jsonDefect(text);
      yield malformed === undefined ? { position, line, text } : { position, line, malformed };
      position++;
    }
  } catch (error) {
    if (!(error instanceof JsonStreamError && error.looksLikeJsonLines)) throw error;
    throw new Error(`${error.message} (if the file is JSON Lines, pass --format jsonl)`, { cause: error });
  } finally {
    input.destroy();
  }
}

/** The items of a CSV or XLSX file: each item's text, or its cells' errors, with its row and `locate`. */
async function* readSheet(
  file: string,
  format: SheetFormat,
  options: { checkFirst: boolean },
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
 * The items of `file` (`-`: standard input, JSON or JSON Lines) in `format`. A spreadsheet is first read
 * whole for its layout, so that a refused file sends nothing; `checkSheetFirst: false` skips that
 * reading for a reader that sends nothing (`readSheetItems`).
 */
export function readItems(
  file: string,
  format: FileFormat,
  { checkSheetFirst = true }: { checkSheetFirst?: boolean } = {},
): AsyncGenerator<SourceItem> {
  switch (format) {
    case 'jsonl':
      return readJsonLines(file);
    case 'json':
      return readJsonArray(file);
    case 'csv':
    case 'xlsx':
      return readSheet(file, format, { checkFirst: checkSheetFirst });
  }
}
