import { fstatSync, type Stats } from 'node:fs';
import fs from 'node:fs/promises';
import { formatOf, inputName, STDIN, type FileFormat } from '../client/json-stream.ts';
import { UsageError } from './command.ts';

/** Where a run reads its items, how, and where it writes the failed ones. */
export interface IngestPaths {
  /** A path, or `-` for standard input. */
  file: string;
  format: FileFormat;
  errorsPath: string;
}

/** What `file` is: standard input's descriptor for `-`, else the file the path names (links followed). */
async function inputStats(file: string): Promise<Stats> {
  if (file === STDIN) return fstatSync(0);
  const stats = await fs.stat(file).catch(() => undefined);
  if (stats === undefined) throw new UsageError(`no such file: ${file}`);
  if (stats.isDirectory()) throw new UsageError(`${file} is a directory`);
  return stats;
}

/**
 * Checks the input and the errors path before anything is opened or sent. Input that is not a regular
 * file (`-`, a FIFO such as `<(zcat …)`) needs `--format`, since its name says nothing of it, and
 * `--errors`, since `<file>.errors.jsonl` would be a file next to a pipe. The errors file is truncated
 * when it is opened, so it must not be the input, under its own name or another (a link).
 */
export async function checkIngestPaths(
  file: string,
  options: { format?: string; errors?: string },
): Promise<IngestPaths> {
  const input = await inputStats(file);
  // Standard input redirected from a file is a regular file too, but `-` names no file to go by.
  if (file === STDIN || !input.isFile()) {
    const what = file === STDIN ? 'standard input' : `${file}, which is not a regular file,`;
    if (options.format === undefined) throw new UsageError(`reading ${what} needs --format json|jsonl`);
    if (options.format === 'csv' || options.format === 'xlsx') {
      // A spreadsheet is read twice: checked whole before anything is sent (docs/reference.md §11.5), then sent.
      throw new UsageError(
        `reading ${what} as ${options.format} is not possible: a spreadsheet must be a file`,
      );
    }
    if (options.errors === undefined) throw new UsageError(`reading ${what} needs --errors <path>`);
  }
  const errorsPath = options.errors ?? `${file}.errors.jsonl`;
  // A path that does not exist yet cannot be the input, which exists; any other failure to stat it
  // is reported when the errors file is opened.
  const errors = await fs.stat(errorsPath).catch(() => undefined);
  if (errors !== undefined && errors.dev === input.dev && errors.ino === input.ino) {
    throw new UsageError(
      `--errors ${errorsPath} is the input ${inputName(file)}: it would be overwritten with the failures`,
    );
  }
  return { file, format: formatOf(file, options.format), errorsPath };
}
