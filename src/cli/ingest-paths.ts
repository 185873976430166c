import fs from 'node:fs/promises';
import { formatOf, type FileFormat } from '../client/json-stream.ts';
import { UsageError } from './command.ts';

/** Where a run reads its items, how, and where it writes the failed ones. */
export interface IngestPaths {
  file: string;
  format: FileFormat;
  errorsPath: string;
}

/**
 * Checks the input and the errors path before anything is opened or sent. The errors file is truncated
 * when it is opened, so it must not be the input, under its own name or another (a link).
 */
export async function checkIngestPaths(
  file: string,
  options: { format?: string; errors?: string },
): Promise<IngestPaths> {
  const input = await fs.stat(file).catch(() => undefined);
  if (!input?.isFile()) throw new UsageError(`no such file: ${file}`);
  const errorsPath = options.errors ?? `${file}.errors.jsonl`;
  // A path that does not exist yet cannot be the input, which exists; any other failure to stat it
  // is reported when the errors file is opened.
  const errors = await fs.stat(errorsPath).catch(() => undefined);
  if (errors !== undefined && errors.dev === input.dev && errors.ino === input.ino) {
    throw new UsageError(
      `--errors ${errorsPath} is the input ${file}: it would be overwritten with the failures`,
    );
  }
  return { file, format: formatOf(file, options.format), errorsPath };
}
