import fs from 'node:fs/promises';
import type { FileFormat } from '../client/json-stream.ts';

/**
 * The state file of command-line runs (docs/reference.md §11.6): one small JSON file per input file, beside it
 * by default (`<file>.ingest-run.json`, like `<file>.errors.jsonl`), recording the last run of that
 * file, so that `--resume` can continue it with the same Idempotency-Keys and labels.
 */

/** The last run of a file, as the state file holds it. */
export interface RunRecord {
  version: 1;
  run_id: string;
  /** The input as given on the command line. */
  file: string;
  /** The file survey's fingerprint (file-survey.ts) when the run began. */
  fingerprint: string;
  batch_size: number;
  format: FileFormat;
  /** The first part of every batch label: `--label`, else the file's base name. */
  label: string;
  /** Batches the run cuts; null when the file stops being readable part way. */
  batches: number | null;
  started_at: string;
  /** When the run read, sent and settled every batch; null while it has not (stopped, interrupted). */
  finished_at: string | null;
}

/** How long the service remembers an Idempotency-Key (docs/reference.md §10.2): the limit of a resume. */
export const KEY_MEMORY_MS = 24 * 3600 * 1000;

/** Where the state of `file`'s runs is kept unless `--state` says otherwise. */
export const defaultStatePath = (file: string): string => `${file}.ingest-run.json`;

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The run recorded at `statePath`, or null when there is no such file. */
export async function readRunRecord(statePath: string): Promise<RunRecord | null> {
  let text: string;
  try {
    text = await fs.readFile(statePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`cannot read the state file ${statePath}: ${message(error)}`);
  }
  try {
    const record = JSON.parse(text) as RunRecord;
    if (record.version === 1 && typeof record.run_id === 'string') return record;
  } catch {
    // Reported below, as for any other content that is not a run.
  }
  throw new Error(
    `the state file ${statePath} does not hold a run of this client; remove it or give --state`,
  );
}

/**
 * Writes `record` to `statePath` whole or not at all (a temporary file renamed over it), so a run
 * killed while writing leaves the previous record, never half of one.
 */
export async function writeRunRecord(statePath: string, record: RunRecord): Promise<void> {
  const temporary = `${statePath}.${process.pid}.tmp`;
  try {
    await fs.writeFile(temporary, `${JSON.stringify(record, null, 2)}\n`);
    await fs.rename(temporary, statePath);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw new Error(
      `cannot write the state file ${statePath}: ${message(error)}; give another path with --state`,
    );
  }
}

/**
 * Why `record` cannot be resumed now, or null when it can: a resume sends the run's keys again, which
 * only means "the same batches" while the file cuts into the same batches (the survey's `fingerprint`,
 * checked when given) and the service still remembers the keys.
 */
export function resumeRefusal(
  record: RunRecord | null,
  { statePath, fingerprint, now }: { statePath: string; fingerprint?: string; now: number },
): string | null {
  const again = 'run without --resume to apply the file as a new run';
  if (record === null) return `--resume: no run of this file is recorded in ${statePath}; ${again}`;
  const run = `run ${record.run_id} (begun ${record.started_at})`;
  if (record.finished_at !== null) {
    return `--resume: the last ${run} finished at ${record.finished_at}: nothing to resume; ${again}`;
  }
  if (now - Date.parse(record.started_at) > KEY_MEMORY_MS) {
    return (
      `--resume: ${run} began more than 24 hours ago, and the service remembers its Idempotency-Keys ` +
      `for 24 hours only, so its stored batches could be stored twice; ${again}`
    );
  }
  if (fingerprint !== undefined && fingerprint !== record.fingerprint) {
    return (
      `--resume: the file changed since ${run}: its batches are no longer the ones that run sent, ` +
      `and their keys would name other batches; ${again}`
    );
  }
  return null;
}
