import { submitInParts, type PartOutcome } from '../import-pipeline/batch-submission.ts';
import type { Batch } from '../import-pipeline/batches.ts';
import { ErrorPlaces, positionOf } from '../import-pipeline/error-places.ts';
import { unsentErrors, type SourceItem } from '../import-pipeline/file-items.ts';
import { createBatchFeed, type BatchFeed } from './batch-feed.ts';
import { cliSubmitter } from './cli-submitter.ts';
import { ErrorsFile, unbatchedLine } from './errors-file.ts';
import type { IngestionClient } from './ingestion-client.ts';
import { inputName, readItems, type FileFormat } from './json-stream.ts';
import type { BatchReport, Counts, Progress } from './progress.ts';
import { describeUndone, type UnknownOutcome } from './run-report.ts';

/** One run of the command-line client: which file, where its errors go, and how to send it. */
export interface IngestRun {
  /** A path, or `-` for standard input. */
  file: string;
  format: FileFormat;
  /** `--encoding`: the file's text encoding when it is neither UTF-8 nor UTF-16 with a byte order mark. */
  encoding?: string;
  errorsPath: string;
  /** Items per batch, at most 1000. */
  batchSize: number;
  /** Batches submitted and not yet finished (terminal, errors written) at any moment. */
  concurrency: number;
  client: IngestionClient;
  progress: Progress;
  /**
   * The run's id (docs/cli.md, "Runs"): each batch is sent with an Idempotency-Key made of it and the
   * batch's positions (src/import-pipeline/idempotency-keys.ts). None sends no key.
   */
  runId?: string;
  /** The label of the batch cut `seq`-th (1-based) from the file (docs/batch-labels.md); none sends none. */
  labelOf?: (seq: number) => string;
  /**
   * Set when the file was just read whole without a defect (the run's survey, `surveyFile`): a
   * spreadsheet's layout is then not checked again by a reading of its own before its items are sent
   * (`readItems`). The run takes the file as unchanged since, as its batches' keys do.
   */
  layoutChecked?: boolean;
  /**
   * Aborted to stop early (Ctrl-C): no batch is read or submitted after it, the accepted ones are
   * followed to their end and their errors written, and the outcome says what was not submitted.
   */
  signal?: AbortSignal;
}

/** How a run ended: the totals, and why it stopped early when it did. */
export interface IngestOutcome extends Counts {
  /** Lines in the errors file (0: the file was removed). */
  errorLines: number;
  seconds: number;
  /**
   * Set when the run stopped before the end of the file: every reason, the accepted batches whose
   * outcome is unknown and the positions not submitted (`describeUndone`).
   */
  stopped: string | undefined;
  /** Whether `signal` stopped the run. */
  interrupted: boolean;
  /** Whether any item failed, a replayed batch's included (the first run's failures are still failures). */
  anyFailed: boolean;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** What the workers of one run share: its totals, its errors file, and why it stops. */
interface RunState {
  run: IngestRun;
  counts: Counts;
  errors: ErrorsFile;
  places: ErrorPlaces;
  /** Aborted by the first error or by `run.signal`: no batch is read or submitted after it. */
  stop: AbortController;
  reasons: Set<string>;
  unknown: UnknownOutcome[];
  unsubmitted: number[];
  /** Failed items of replayed batches: in `replayed`, yet the file has failures. */
  replayedFailures: number;
  /** Set once a batch was accepted: the others may start, and the feed read ahead. */
  accepted: () => void;
}

const fail = (state: RunState, error: unknown) => {
  state.reasons.add(message(error));
  state.stop.abort();
};

/** Counts an item that cannot be sent (not JSON, bad spreadsheet cells) as failed, and writes why. */
async function writeUnsendable(state: RunState, item: SourceItem & { text?: undefined }) {
  state.counts.failed++;
  const malformed = item.malformed !== undefined;
  await state.errors.write(
    unbatchedLine(
      item.position,
      unsentErrors(item),
      malformed ? item.line : undefined,
      malformed ? null : item.externalId,
    ),
  );
}

/**
 * Follows an accepted part until terminal and writes its errors, with the items' file positions (and
 * a spreadsheet's rows and columns); returns its terminal status. A replayed part's errors are written
 * too (the errors file lists every failed item of the file), but its items count as replayed, not as
 * upserted or failed.
 */
async function follow(state: RunState, part: PartOutcome & { kind: 'accepted' }): Promise<string> {
  const { client } = state.run;
  const final = await client.waitUntilTerminal(part.batchId);
  for await (const page of client.errorRecords(part.batchId)) {
    for (const record of page) {
      const position = positionOf(part.positions, record.index);
      await state.errors.write({
        position,
        batch_id: part.batchId,
        index: record.index,
        external_id: record.external_id,
        sku: record.sku,
        errors: state.places.place(position, record.errors),
      });
    }
  }
  state.places.forget(part.positions);
  if (part.replayed) {
    state.counts.replayed += part.positions.length;
    state.replayedFailures += final.failed;
  } else {
    state.counts.upserted += final.upserted;
    state.counts.failed += final.failed;
  }
  return final.status;
}

/** Sends one batch part by part (`submitInParts`), follows each accepted part, and reports the batch. */
async function sendBatch(state: RunState, batch: Batch): Promise<void> {
  const { run, counts } = state;
  const report: BatchReport = { seq: batch.seq, positions: batch.positions, parts: [], unsent: false };
  const label = run.labelOf?.(batch.seq);
  const parts = submitInParts(cliSubmitter(run.client), batch, state.stop.signal, {
    runId: run.runId,
    label,
  });
  for await (const part of parts) {
    switch (part.kind) {
      case 'accepted':
        state.accepted();
        counts.submitted += part.positions.length;
        run.progress.update(counts);
        try {
          const status = await follow(state, part);
          report.parts.push({ id: part.batchId, status, replayed: part.replayed });
        } catch (error) {
          // The other batches in flight are still followed to their end; this one is reported.
          state.unknown.push({ batchId: part.batchId, positions: part.positions });
          report.parts.push({ id: part.batchId, status: 'outcome unknown', replayed: part.replayed });
          fail(state, error);
        }
        break;
      case 'refused':
        counts.failed++;
        await state.errors.write(
          unbatchedLine(part.position, state.places.place(part.position, part.errors)),
        );
        state.places.forget([part.position]);
        run.progress.update(counts);
        break;
      case 'unsent':
        state.unsubmitted.push(...part.positions);
        report.unsent = true;
        if (part.error !== undefined) fail(state, part.error);
        break;
    }
  }
  run.progress.batchDone(counts, report);
}

/** One worker: takes the feed's next batch and sends it, until the file ends or the run stops. */
async function work(state: RunState, feed: BatchFeed, cutReported: { done: boolean }): Promise<void> {
  while (!state.stop.signal.aborted) {
    const batch = await feed.next();
    if (batch) {
      await sendBatch(state, batch);
      continue;
    }
    if (feed.failed !== undefined) {
      fail(state, `cannot read ${inputName(state.run.file)}: ${message(feed.failed)}`);
    } else if (feed.readAll && !cutReported.done) {
      cutReported.done = true;
      state.run.progress.batchesCut(feed.lastSeq);
    }
    return;
  }
}

/**
 * Streams the file into batches and keeps `concurrency` of them in flight: each is submitted through
 * the shared pipeline (docs/import-pipeline.md: halves for a batch refused as a whole, 429s waited
 * out), polled until terminal, and its error records are appended to the errors file with the items'
 * file positions. A batch stays in flight until its errors are written, so the service's backlog, and
 * the memory here, stay at a few batches.
 */
export async function ingestFile(run: IngestRun): Promise<IngestOutcome> {
  const startedAt = performance.now();
  // The other workers start once one batch is accepted, so a refused token or an unreachable
  // service is reported once, with nothing read ahead.
  let release = () => {};
  const started = new Promise<void>((resolve) => (release = resolve));
  const state: RunState = {
    run,
    counts: { read: 0, submitted: 0, upserted: 0, failed: 0, replayed: 0 },
    errors: await ErrorsFile.open(run.errorsPath),
    places: new ErrorPlaces(),
    stop: new AbortController(),
    reasons: new Set(),
    unknown: [],
    unsubmitted: [],
    replayedFailures: 0,
    accepted: () => {
      feed.readAhead();
      release();
    },
  };
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
    state.stop.abort();
  };
  if (run.signal?.aborted) interrupt();
  run.signal?.addEventListener('abort', interrupt, { once: true });

  async function* counted(): AsyncGenerator<SourceItem> {
    const items = readItems(run.file, run.format, {
      checkSheetFirst: run.layoutChecked !== true,
      encoding: run.encoding,
    });
    for await (const item of items) {
      state.counts.read++;
      run.progress.update(state.counts);
      if (item.text !== undefined) state.places.remember(item);
      yield item;
    }
  }
  const feed = createBatchFeed(counted(), {
    batchSize: run.batchSize,
    unsendable: (item) => writeUnsendable(state, item),
    signal: state.stop.signal,
  });
  const cutReported = { done: false };
  const worker = async (n: number) => {
    if (n > 0) await started;
    try {
      await work(state, feed, cutReported);
    } finally {
      release();
    }
  };
  try {
    await Promise.all(Array.from({ length: run.concurrency }, (_, n) => worker(n)));
  } finally {
    run.signal?.removeEventListener('abort', interrupt);
    await feed.close();
    await state.errors.close();
    run.progress.clear();
  }
  const { counts, reasons } = state;
  const stopped =
    reasons.size === 0 && !interrupted
      ? undefined
      : describeUndone({
          reasons: interrupted ? ['interrupted', ...reasons] : [...reasons],
          unknown: state.unknown,
          unsubmitted: state.unsubmitted,
          unbatchedFrom: feed.readAll ? undefined : feed.batchedUpTo,
          submittedAny: counts.submitted > 0,
        });
  return {
    ...counts,
    errorLines: state.errors.lines,
    seconds: (performance.now() - startedAt) / 1000,
    stopped,
    interrupted,
    anyFailed: counts.failed + state.replayedFailures > 0,
  };
}
