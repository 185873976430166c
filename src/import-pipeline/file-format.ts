import type { FieldError } from './problem-answer.ts';

/**
 * How a file holds its items, and the error of an item that is not JSON: the rules the command-line
 * client and the dashboard's import share (docs/import-pipeline.md). No Node.js module here: the dashboard
 * bundles this file.
 */

/** The formats a file of items comes in. */
export type FileFormat = 'json' | 'jsonl' | 'csv' | 'xlsx';

/** Every format, as `--format` takes it. */
export const FILE_FORMATS: readonly FileFormat[] = ['json', 'jsonl', 'csv', 'xlsx'];

/** The format a file's name says: `.jsonl`/`.ndjson` → jsonl, `.csv` → csv, `.xlsx` → xlsx, else json. */
export function formatOfName(name: string): FileFormat {
  const extension = /\.[^./\\]*$/.exec(name)?.[0].toLowerCase() ?? '';
  if (extension === '.jsonl' || extension === '.ndjson') return 'jsonl';
  if (extension === '.csv') return 'csv';
  if (extension === '.xlsx') return 'xlsx';
  return 'json';
}

/** The code of an item that is not valid JSON on its own; it is never sent. */
export const MALFORMED_JSON = 'malformed_json';

/** The error of the item starting on `line` that is not valid JSON, `why` being the parser's words. */
export function malformedJsonError(line: number, why: string): FieldError {
  return { field: '', code: MALFORMED_JSON, message: `The item at line ${line} is not valid JSON: ${why}` };
}

/**
 * The codes of the errors the client reports itself, for items the service never took in a batch; the
 * service's own codes are those of docs/api-conventions.md#processing-a-batch.
 */
export const CLIENT_ERROR_CODES = {
  /** The item is not valid JSON on its own; it was never sent (above). */
  malformedJson: MALFORMED_JSON,
  /** The service answered 413 to the item sent alone. */
  payloadTooLarge: 'payload_too_large',
  /** The service answered 400 to the item sent alone, without naming a field. */
  invalidBody: 'invalid_body',
} as const;
