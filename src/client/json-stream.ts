import { stat } from 'node:fs/promises';
import path from 'node:path';
import { jsonArrayItems, jsonLineItems, type SourceItem } from '../import-pipeline/file-items.ts';
import { TextEncodingError } from '../spreadsheets/text-encoding.ts';
import { fileBytes, fileText } from './file-text.ts';
import { FILE_FORMATS, formatOfName, type FileFormat } from '../import-pipeline/file-format.ts';
import { readSheetItems } from './sheet-stream.ts';

/**
 * How a file holds its items: one JSON document (an array, or `{"items": [...]}`), a value per line,
 * or a spreadsheet in the layout of docs/reference.md §11.5.
 */
export type { FileFormat };

/**
 * The command line's side of the import pipeline (docs/import-pipeline.md): a file or standard input
 * read with Node's streams and handed to the shared readers (`src/import-pipeline/file-items.ts`).
 */
export type { SourceItem };

/** The file name that means standard input, as in most command-line tools. */
export const STDIN = '-';

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

/** The items of a JSONL file (`-`: standard input), one per non-blank line; a line that is not JSON is yielded as malformed. */
export function readJsonLines(file: string, encoding?: string): AsyncGenerator<SourceItem> {
  return jsonLineItems(openInput(file, encoding));
}

/** The items of a JSON file, streamed out of its top-level array (`jsonArrayItems`). */
export function readJsonArray(file: string, encoding?: string): AsyncGenerator<SourceItem> {
  return jsonArrayItems(openInput(file, encoding), 'if the file is JSON Lines, pass --format jsonl');
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
      yield* readSheetItems(file, format, { checkFirst: checkSheetFirst, encoding });
  }
}
