import { XLSX_TYPE } from '../spreadsheets/sheet-layout.ts';
import type { StoredProduct } from './ingest-parts.ts';
import { NDJSON_TYPE, ndjsonLines } from './ndjson-writer.ts';
import { csvChunks } from './csv-writer.ts';
import { xlsxChunks } from './xlsx-writer.ts';

/** Turns the catalog's pages, as they are read, into the file's bytes (or text), chunk by chunk. */
export type ExportWriter = (
  pages: AsyncIterable<readonly StoredProduct[]>,
) => AsyncIterable<string | Uint8Array>;

/** One form of the export (docs/reference.md §11.4): the media types it answers and how it is written. */
export interface ExportFormat {
  /** The media type it is sent as, and the first one that asks for it. */
  readonly mediaType: string;
  /** Other media types answered with this form. */
  readonly alsoFor: readonly string[];
  readonly contentType: string;
  readonly fileExtension: string;
  readonly write: ExportWriter;
  /** The longest text a cell of this form holds, when it has a limit (docs/reference.md §11.4: XLSX's 32,767). */
  readonly maxTextLength?: number;
}

/** Excel's limit on the characters of one cell, which the XLSX export keeps (docs/reference.md §11.4). */
export const XLSX_MAX_TEXT_LENGTH = 32_767;

export { XLSX_TYPE };

/**
 * Every form, the default first: on equal preference the earlier one is sent, so no `Accept`, `*\/*`
 * or `application/json` give NDJSON. CSV and XLSX are in the spreadsheet layout (docs/reference.md §11.5).
 */
export const EXPORT_FORMATS: readonly ExportFormat[] = [
  {
    mediaType: NDJSON_TYPE,
    alsoFor: ['application/json'],
    contentType: NDJSON_TYPE,
    fileExtension: 'ndjson',
    write: ndjsonLines,
  },
  {
    mediaType: 'text/csv',
    alsoFor: [],
    contentType: 'text/csv; charset=utf-8',
    fileExtension: 'csv',
    write: csvChunks,
  },
  {
    mediaType: XLSX_TYPE,
    alsoFor: [],
    contentType: XLSX_TYPE,
    fileExtension: 'xlsx',
    write: xlsxChunks,
    maxTextLength: XLSX_MAX_TEXT_LENGTH,
  },
];
