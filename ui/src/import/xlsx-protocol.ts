import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';

/**
 * What the page asks the XLSX worker: open this file; the next rows of reading `cursor` (a reading
 * starts at the sheet's first row when its cursor is new); stop reading `cursor` before its end.
 */
export type XlsxRequest =
  | { type: 'open'; file: File }
  | { type: 'rows'; id: number; cursor: number }
  | { type: 'close'; cursor: number };

/**
 * What the worker answers: the file is a workbook it can read (or why not: `failed` without `id`), a
 * slice of a reading's rows (`done` at its end), or why a reading stopped (`failed` with its `id`).
 */
export type XlsxAnswer =
  | { type: 'opened'; sheetName: string; milliseconds: number }
  | { type: 'failed'; id?: number; message: string }
  | { type: 'rows'; id: number; rows: SheetRow[]; done: boolean };

/** Rows per answer: enough that messages are few, few enough that converting them is a short task. */
export const ROWS_PER_MESSAGE = 1000;
