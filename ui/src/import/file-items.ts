import { JsonStreamError, splitJsonArray } from '../../../src/client/json-splitter.ts';
import { formatOfName, type FileFormat } from '../../../src/client/file-format.ts';
import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';
import { TextEncodingError } from '../../../src/spreadsheets/text-encoding.ts';
import { checkSheet, numberedSheetItems } from '../../../src/spreadsheets/sheet-converter.ts';
import {
  placeErrors,
  type CellError,
  type PlacedError,
  type SheetItem,
} from '../../../src/spreadsheets/sheet-items.ts';
import { XLSX_TYPE } from '../../../src/spreadsheets/sheet-layout.ts';
import { textChunks } from './text-chunks.ts';

/**
 * One item of a dropped file, at its 0-based `position`, starting on `line` (a spreadsheet's row): its
 * JSON text, or why it cannot be sent (not JSON; a spreadsheet's cells it cannot be read from). A
 * spreadsheet's item tells where each of its fields is (`locate`), so errors name row and column.
 */
export type FileItem = { position: number; line: number; locate?: SheetItem['locate'] } & (
  | { text: string; malformed?: undefined; cellErrors?: undefined }
  | { text?: undefined; malformed: string; cellErrors?: undefined }
  | {
      text?: undefined;
      malformed?: undefined;
      cellErrors: Array<PlacedError<CellError>>;
      /** The product's id, for the preview to name the item. */
      externalId: string | null;
    }
);

/**
 * How a file holds its items: by its name, as the command-line client decides (file-format.ts), or
 * an XLSX by its type when its name says nothing.
 */
export function formatOf(file: File): FileFormat {
  const byName = formatOfName(file.name);
  return byName === 'json' && file.type === XLSX_TYPE ? 'xlsx' : byName;
}

/** Whether the file is a spreadsheet, whose items have rows and columns (CONTRACT §11.5). */
export const isSheet = (source: { format: FileFormat }) =>
  source.format === 'csv' || source.format === 'xlsx';

/** A chosen file, ready to be read as often as the import needs: to check, preview, send. */
export interface ImportFile {
  file: File;
  format: FileFormat;
  /**
   * Throws a spreadsheet's layout defect (`SheetLayoutError`, naming row and column; a byte its
   * encoding cannot read is one), or a JSON file's byte its encoding cannot read (`TextEncodingError`,
   * naming its line).
   */
  check(): Promise<void>;
  /** The file's items, read from its start, streamed. */
  items(): AsyncGenerator<FileItem>;
  /** Frees what reading holds (the XLSX worker). */
  close(): void;
}

/** Why `text` is not one JSON value, or undefined when it is. */
function jsonDefect(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The text of a JSON or JSON Lines file; a byte its encoding cannot read is named by its line. */
async function* jsonText(file: File, encoding: string | undefined): AsyncGenerator<string> {
  let lineFeeds = 0;
  try {
    for await (const text of textChunks(file, { encoding, format: 'json' })) {
      for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) lineFeeds++;
      yield text;
    }
  } catch (error) {
    if (error instanceof TextEncodingError) throw error.at(`line ${lineFeeds + 1}`);
    throw error;
  }
}

async function* jsonLines(file: File, encoding: string | undefined): AsyncGenerator<FileItem> {
  let rest = '';
  let line = 0;
  let position = 0;
  const item = (raw: string): FileItem | null => {
    line++;
    const text = raw.trim();
    if (text === '') return null;
    const malformed = jsonDefect(text);
    const found: FileItem =
      malformed === undefined ? { position, line, text } : { position, line, malformed };
    position++;
    return found;
  };
  for await (const chunk of jsonText(file, encoding)) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const raw of lines) {
      const found = item(raw);
      if (found) yield found;
    }
  }
  const last = item(rest);
  if (last) yield last;
}

async function* jsonArray(file: File, encoding: string | undefined): AsyncGenerator<FileItem> {
  let position = 0;
  try {
    // The same splitter as the command-line client: the array is cut into element texts without
    // parsing the document, and each element is checked on its own.
    for await (const { text, line } of splitJsonArray(jsonText(file, encoding))) {
      const malformed = jsonDefect(text);
      yield malformed === undefined ? { position, line, text } : { position, line, malformed };
      position++;
    }
  } catch (error) {
    if (error instanceof JsonStreamError && error.looksLikeJsonLines)
      throw new Error(`${error.message}: if the file is JSON Lines, give it a .jsonl name`, { cause: error });
    throw error;
  }
}

/** A spreadsheet's items by the command-line client's converter; those whose cells cannot be read carry their placed errors. */
async function* sheetFileItems(rows: AsyncIterable<SheetRow>): AsyncGenerator<FileItem> {
  for await (const { position, row, text, externalId, cellErrors, locate } of numberedSheetItems(rows)) {
    yield cellErrors.length === 0
      ? { position, line: row, text, locate }
      : {
          position,
          line: row,
          cellErrors: placeErrors(cellErrors, locate),
          externalId,
          locate,
        };
  }
}

/**
 * Opens `file` for the import. JSON, JSON Lines and CSV are read as text streams on the page, yielding
 * to it between slices (`textChunks`), in `encoding` when one is chosen (else UTF-8, or UTF-16 by a
 * byte order mark); XLSX is read by a Web Worker, loaded only now (see `xlsx-file.ts`).
 */
export async function openImportFile(
  file: File,
  { encoding }: { encoding?: string | undefined } = {},
): Promise<ImportFile> {
  const format = formatOf(file);
  const json = (items: () => AsyncGenerator<FileItem>): ImportFile => ({
    file,
    format,
    // Read to its end before anything is sent, as a spreadsheet's layout is: decoding only.
    check: async () => {
      for await (const _ of jsonText(file, encoding)) {
        // decoding only
      }
    },
    items,
    close: () => {},
  });
  switch (format) {
    case 'jsonl':
      return json(() => jsonLines(file, encoding));
    case 'json':
      return json(() => jsonArray(file, encoding));
    case 'csv': {
      // csv-parse's browser build carries its own stream library: fetched only for a CSV file.
      const { csvEncodingRefusal, csvRows } = await import('../../../src/spreadsheets/csv-rows.ts');
      async function* rows(): AsyncGenerator<SheetRow> {
        try {
          yield* csvRows(textChunks(file, { encoding, format: 'csv' }));
        } catch (error) {
          if (!(error instanceof TextEncodingError)) throw error;
          // Read again up to the byte, to name its row and column (docs/spreadsheets.md#encodings).
          throw await csvEncodingRefusal(error, () =>
            textChunks(file.slice(0, error.offset), { encoding: error.encoding, format: 'csv' }),
          );
        }
      }
      return {
        file,
        format,
        check: async () => void (await checkSheet(rows())),
        items: () => sheetFileItems(rows()),
        close: () => {},
      };
    }
    case 'xlsx': {
      const { openXlsxFile } = await import('./xlsx-file.ts');
      const workbook = await openXlsxFile(file);
      return {
        file,
        format,
        check: async () => void (await checkSheet(workbook.rows())),
        items: () => sheetFileItems(workbook.rows()),
        close: () => workbook.close(),
      };
    }
  }
}

/** The items in groups of at most `size` (a submission's limit is 1000). */
export async function* inGroups<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let group: T[] = [];
  for await (const item of items) {
    group.push(item);
    if (group.length === size) {
      yield group;
      group = [];
    }
  }
  if (group.length > 0) yield group;
}
