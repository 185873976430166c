import { formatOfName, type FileFormat } from '../../../src/import-pipeline/file-format.ts';
import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';
import { TextEncodingError } from '../../../src/spreadsheets/text-encoding.ts';
import { checkSheet } from '../../../src/spreadsheets/sheet-converter.ts';
import { XLSX_TYPE } from '../../../src/spreadsheets/sheet-layout.ts';
import {
  jsonArrayItems,
  jsonLineItems,
  sheetFileItems,
  type SourceItem,
} from '../../../src/import-pipeline/file-items.ts';
import { textChunks } from './text-chunks.ts';

/**
 * The dashboard's side of the import pipeline's reading (docs/import-pipeline.md): a chosen `File`
 * read on the page in slices (`textChunks`), or an XLSX through its Web Worker, handed to the shared
 * readers (`src/import-pipeline/file-items.ts`), which make the items as the command line's are.
 */

/**
 * How a file holds its items: by its name, as the command-line client decides (file-format.ts), or
 * an XLSX by its type when its name says nothing.
 */
export function formatOf(file: File): FileFormat {
  const byName = formatOfName(file.name);
  return byName === 'json' && file.type === XLSX_TYPE ? 'xlsx' : byName;
}

/** Whether the file is a spreadsheet, whose items have rows and columns (docs/reference.md §11.5). */
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
  items(): AsyncGenerator<SourceItem>;
  /** Frees what reading holds (the XLSX worker). */
  close(): void;
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
  const json = (items: () => AsyncGenerator<SourceItem>): ImportFile => ({
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
      return json(() => jsonLineItems(jsonText(file, encoding)));
    case 'json':
      return json(() =>
        jsonArrayItems(jsonText(file, encoding), 'if the file is JSON Lines, give it a .jsonl name'),
      );
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
