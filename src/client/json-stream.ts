import { createReadStream } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { JsonStreamError, splitJsonArray } from './json-splitter.ts';

/** How a file holds its items: one JSON document (an array, or `{"items": [...]}`), or a value per line. */
export type FileFormat = 'json' | 'jsonl';

/** One item of a file, at its 0-based `position` among the items: its JSON text, or why it is not JSON. */
export type SourceItem =
  | { position: number; line: number; text: string; malformed?: undefined }
  | { position: number; line: number; text?: undefined; malformed: string };

/** The file name that means standard input, as in most command-line tools. */
export const STDIN = '-';

const JSONL_EXTENSIONS = new Set(['.jsonl', '.ndjson']);
const READ_CHUNK_BYTES = 256 * 1024;
const OUTER_WHITESPACE = /^[ \t\r\n\uFEFF]+|[ \t\r\n]+$/g;

/** The format of `file`: `explicit` when given, else `.jsonl`/`.ndjson` → jsonl, anything else → json. */
export function formatOf(file: string, explicit?: string): FileFormat {
  if (explicit === 'json' || explicit === 'jsonl') return explicit;
  if (explicit !== undefined)
    throw new Error(`--format must be json or jsonl, not ${JSON.stringify(explicit)}`);
  return JSONL_EXTENSIONS.has(path.extname(file).toLowerCase()) ? 'jsonl' : 'json';
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

/** The items of `file` (`-`: standard input) in `format`. */
export function readItems(file: string, format: FileFormat): AsyncGenerator<SourceItem> {
  return format === 'jsonl' ? readJsonLines(file) : readJsonArray(file);
}
