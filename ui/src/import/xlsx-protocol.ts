import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';

/** What the page asks the XLSX worker: read this file; the next rows from `from` (an index into the sheet's rows). */
export type XlsxRequest = { type: 'open'; file: File } | { type: 'rows'; id: number; from: number };

/** What the worker answers: the file is read (or why not), or a slice of rows (`done` at the end). */
export type XlsxAnswer =
  | { type: 'opened'; rows: number; milliseconds: number }
  | { type: 'failed'; message: string }
  | { type: 'rows'; id: number; rows: SheetRow[]; done: boolean };

/** Rows per answer: enough that messages are few, few enough that converting them is a short task. */
export const ROWS_PER_MESSAGE = 1000;
