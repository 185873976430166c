import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { batchLabel, labelBaseRefusal, nameLabelBase } from '../client/batch-label.ts';
import { surveyFile } from '../client/file-survey.ts';
import { inputName, STDIN, type FileFormat } from '../client/json-stream.ts';
import { UsageError } from './command.ts';
import {
  defaultStatePath,
  readRunRecord,
  resumeRefusal,
  writeRunRecord,
  type RunRecord,
} from './run-state.ts';

/** Items per batch when neither `--batch-size` nor a resumed run says. */
export const DEFAULT_BATCH_SIZE = 1000;

/** What the command line asked about the run (docs/reference.md §11.6). */
export interface RunOptions {
  file: string;
  format: FileFormat;
  /** `--format` as given, to tell a resume's conflicting choice from the default. */
  explicitFormat: string | undefined;
  /** `--encoding`, as a WHATWG label: the file's text is read in it (docs/spreadsheets.md#encodings). */
  encoding: string | undefined;
  batchSize: number | undefined;
  label: string | undefined;
  resume: boolean;
  state: string | undefined;
}

/** A run about to start: its id, how it cuts and labels batches, and where it is recorded. */
export interface RunPlan {
  runId: string;
  batchSize: number;
  /** Batches the file cuts into, when known before sending. */
  batches: number | null;
  labelOf: (seq: number) => string;
  /** The state file and the record in it; null for input that cannot be read twice. */
  state: { path: string; record: RunRecord } | null;
  /** Lines for stderr before the run starts: the run a resume continues. */
  notes: string[];
}

/** The labels' base of a run of `file` without `--label` (batch-label.ts). */
const fileLabelBase = (file: string) => nameLabelBase(file === STDIN ? 'stdin' : path.basename(file));

/**
 * Decides the run: a new one (a new id, recorded in the state file before any batch is sent), or,
 * with `--resume`, the last unfinished run of the file, continued with its id, batch size, format
 * and labels once the file is found unchanged. Throws, sending nothing, when that cannot be.
 */
export async function planRun(options: RunOptions): Promise<RunPlan> {
  const labelProblem = options.label === undefined ? null : labelBaseRefusal(options.label);
  if (labelProblem) throw new UsageError(labelProblem);
  const regular = options.file !== STDIN && (await fs.stat(options.file)).isFile();
  if (!regular) {
    if (options.resume || options.state !== undefined) {
      throw new UsageError(
        `--resume and --state need a regular file: ${inputName(options.file)} cannot be read twice`,
      );
    }
    const base = options.label ?? fileLabelBase(options.file);
    return {
      runId: randomUUID(),
      batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
      batches: null,
      labelOf: (seq) => batchLabel(base, seq, null),
      state: null,
      notes: [],
    };
  }
  const statePath = options.state ?? defaultStatePath(options.file);
  const prior = await readRunRecord(statePath);
  // Read for a new run too: a path that holds something else is refused rather than overwritten.
  return options.resume ? resumed(options, statePath, prior) : started(options, statePath);
}

async function resumed(options: RunOptions, statePath: string, prior: RunRecord | null): Promise<RunPlan> {
  const now = Date.now();
  const refusal = resumeRefusal(prior, { statePath, now });
  if (refusal !== null || prior === null) throw new Error(refusal ?? 'no run to resume');
  const conflicts = [
    options.batchSize !== undefined && options.batchSize !== prior.batch_size
      ? `--batch-size ${prior.batch_size}`
      : null,
    options.explicitFormat !== undefined && options.explicitFormat !== prior.format
      ? `--format ${prior.format}`
      : null,
    options.label !== undefined && options.label !== prior.label
      ? `--label ${JSON.stringify(prior.label)}`
      : null,
  ].filter((conflict) => conflict !== null);
  if (conflicts.length > 0) {
    throw new UsageError(
      `--resume continues run ${prior.run_id} as it began, with ${conflicts.join(', ')}; leave these options out`,
    );
  }
  const survey = await surveyFile(options.file, prior.format, prior.batch_size, options.encoding);
  const changed = resumeRefusal(prior, { statePath, now, fingerprint: survey.fingerprint });
  if (changed !== null) throw new Error(changed);
  return {
    runId: prior.run_id,
    batchSize: prior.batch_size,
    batches: survey.batches,
    labelOf: (seq) => batchLabel(prior.label, seq, survey.batches),
    state: { path: statePath, record: prior },
    notes: [`resuming run ${prior.run_id} (begun ${prior.started_at}); state in ${statePath}`],
  };
}

/** A new run: it replaces the file's record, an unfinished run's too (that one can no longer be resumed). */
async function started(options: RunOptions, statePath: string): Promise<RunPlan> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const survey = await surveyFile(options.file, options.format, batchSize, options.encoding);
  const record: RunRecord = {
    version: 1,
    run_id: randomUUID(),
    file: options.file,
    fingerprint: survey.fingerprint,
    batch_size: batchSize,
    format: options.format,
    label: options.label ?? fileLabelBase(options.file),
    batches: survey.batches,
    started_at: new Date().toISOString(),
    finished_at: null,
  };
  // Recorded before the first batch is sent: a run killed at any point after can be resumed.
  await writeRunRecord(statePath, record);
  return {
    runId: record.run_id,
    batchSize,
    batches: survey.batches,
    labelOf: (seq) => batchLabel(record.label, seq, survey.batches),
    state: { path: statePath, record },
    notes: [],
  };
}

/** Records that the run read, sent and settled every batch: `--resume` has nothing left to do. */
export async function finishRun(plan: RunPlan): Promise<void> {
  if (plan.state === null) return;
  await writeRunRecord(plan.state.path, { ...plan.state.record, finished_at: new Date().toISOString() });
}
