import { batchesOf, type Batch, type WellFormedItem } from './batches.ts';
import { submitInParts } from './batch-submission.ts';
import { ErrorsFile, unbatchedLine, type ErrorLine } from './errors-file.ts';
import type { IngestionClient } from './ingestion-client.ts';
import { inputName, readItems, unsentErrors, type FileFormat, type SourceItem } from './json-stream.ts';
import { placeErrors } from '../spreadsheets/sheet-items.ts';
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
   * The run's id (CONTRACT §11.6): each batch is sent with an Idempotency-Key made of it and the
   * batch's positions (idempotency-keys.ts). None sends no key.
   */
  runId?: string;
  /** The label of the batch cut `seq`-th (1-based) from the file (CONTRACT §11.1); none sends none. */
  labelOf?: (seq: number) => string;
  /**
   * Set when the file was just read whole without a defect (the run's survey, `surveyFile`): a
   * spreadsheet's layout is then not checked again by a reading of its own before its items are sent
   * (`readItems`). The run takes the file as unchanged since, as its batches' keys do (§11.6).
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

/**
 * Streams the file into batches and keeps `concurrency` of them in flight: each is submitted (the
 * client retries 429s, 5xx and network failures; a batch refused as a whole is sent again in halves),
 * polled until terminal, and its error records are appended to the errors file with the items' file
 * positions. A batch stays in flight until its errors are written, so the service's backlog, and the
 * memory here, stay at a few batches.
 */
export async function ingestFile(run: IngestRun): Promise<IngestOutcome> {
  const startedAt = performance.now();
  const counts: Counts = { read: 0, submitted: 0, upserted: 0, failed: 0, replayed: 0 };
  const errors = await ErrorsFile.open(run.errorsPath);
  /** Aborted by the first error or by `run.signal`: no batch is read or submitted after it. */
  const stop = new AbortController();
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
    stop.abort();
  };
  if (run.signal?.aborted) interrupt();
  run.signal?.addEventListener('abort', interrupt, { once: true });
  const reasons = new Set<string>();
  const unknown: UnknownOutcome[] = [];
  const unsubmitted: number[] = [];
  let readAll = false;
  let readFailed = false;
  /** Failed items of replayed batches: in `replayed`, yet the file has failures. */
  let replayedFailures = 0;
  /** The first position after the last batch handed to a worker, and that batch's seq. */
  let batchedUpTo = 0;
  let lastSeq = 0;

  const fail = (error: unknown) => {
    reasons.add(message(error));
    stop.abort();
  };

  /**
   * Where the fields of a spreadsheet's items in flight are, by position, so their errors name row
   * and column (CONTRACT §11.5); an entry goes once the item's errors are written.
   */
  const places = new Map<number, NonNullable<SourceItem['locate']>>();
  const placed = (position: number, errors: ErrorLine['errors']) => {
    const locate = places.get(position);
    return locate === undefined ? errors : placeErrors(errors, locate);
  };

  /** The items to send; one that cannot be (not JSON, bad spreadsheet cells) is counted as failed here. */
  async function* wellFormed(): AsyncGenerator<WellFormedItem> {
    for await (const item of readItems(run.file, run.format, {
      checkSheetFirst: run.layoutChecked !== true,
      encoding: run.encoding,
    })) {
      counts.read++;
      run.progress.update(counts);
      if (item.text !== undefined) {
        if (item.locate !== undefined) places.set(item.position, item.locate);
        yield { position: item.position, text: item.text };
        continue;
      }
      counts.failed++;
      await errors.write(
        unbatchedLine(
          item.position,
          unsentErrors(item),
          item.malformed === undefined ? undefined : item.line,
          item.malformed === undefined ? item.externalId : null,
        ),
      );
    }
  }
  const batches = batchesOf(wellFormed(), { size: run.batchSize });
  /**
   * The batch after the one last handed out, being read meanwhile: a worker whose batch is done
   * then finds its next one ready, rather than reading it while the service may have nothing to do
   * (a spreadsheet's 1000 items take a tenth of a second or more to read and convert). One batch
   * more in memory. Only once a batch was accepted: until then the token or the address may be
   * refused, and a run stopped then has read no more than it tried to send.
   */
  let ahead: Promise<IteratorResult<Batch>> | null = null;
  let accepted = false;
  const readAhead = () => {
    ahead = batches.next();
    // Awaited by the next call of nextBatch; until then a failure must not count as unhandled.
    ahead.catch(() => {});
  };

  const nextBatch = async (): Promise<Batch | undefined> => {
    try {
      const pending = ahead ?? batches.next();
      ahead = null;
      const next = await pending;
      if (!next.done && !stop.signal.aborted && accepted) readAhead();
      if (next.done) {
        // A generator that threw answers "done" from then on: that is not the end of the file.
        if (!readFailed && !readAll) {
          readAll = true;
          run.progress.batchesCut(lastSeq);
        }
        return undefined;
      }
      lastSeq = next.value.seq;
      batchedUpTo = Math.max(batchedUpTo, (next.value.positions.at(-1) ?? -1) + 1);
      return next.value;
    } catch (error) {
      readFailed = true;
      fail(`cannot read ${inputName(run.file)}: ${message(error)}`);
      return undefined;
    }
  };

  /**
   * Follows an accepted part until terminal and writes its errors, with the items' file positions;
   * returns its terminal status. A replayed part's errors are written too (the errors file lists
   * every failed item of the file), but its items count as replayed, not as upserted or failed.
   */
  const follow = async (positions: readonly number[], batchId: string, replayed: boolean) => {
    const final = await run.client.waitUntilTerminal(batchId);
    for await (const page of run.client.errorRecords(batchId)) {
      for (const record of page) {
        const position = positions[record.index] ?? -1;
        await errors.write({
          position,
          batch_id: batchId,
          index: record.index,
          external_id: record.external_id,
          sku: record.sku,
          errors: placed(position, record.errors),
        });
      }
    }
    for (const position of positions) places.delete(position);
    if (replayed) {
      counts.replayed += positions.length;
      replayedFailures += final.failed;
    } else {
      counts.upserted += final.upserted;
      counts.failed += final.failed;
    }
    return final.status;
  };

  // The others start once one batch is accepted, so a refused token or an unreachable service is
  // reported once, with nothing read ahead.
  let release = () => {};
  const started = new Promise<void>((resolve) => (release = resolve));

  const worker = async (n: number) => {
    if (n > 0) await started;
    try {
      await work();
    } finally {
      release();
    }
  };

  const work = async () => {
    while (!stop.signal.aborted) {
      const batch = await nextBatch();
      if (!batch) return;
      const report: BatchReport = { seq: batch.seq, positions: batch.positions, parts: [], unsent: false };
      const label = run.labelOf?.(batch.seq);
      for await (const part of submitInParts(run.client, batch, stop.signal, { runId: run.runId, label })) {
        switch (part.kind) {
          case 'accepted':
            accepted = true;
            release();
            counts.submitted += part.positions.length;
            run.progress.update(counts);
            try {
              const status = await follow(part.positions, part.batchId, part.replayed);
              report.parts.push({ id: part.batchId, status, replayed: part.replayed });
            } catch (error) {
              // The other batches in flight are still followed to their end; this one is reported.
              unknown.push({ batchId: part.batchId, positions: part.positions });
              report.parts.push({ id: part.batchId, status: 'outcome unknown', replayed: part.replayed });
              fail(error);
            }
            break;
          case 'refused':
            counts.failed++;
            await errors.write(unbatchedLine(part.position, placed(part.position, part.errors)));
            places.delete(part.position);
            run.progress.update(counts);
            break;
          case 'unsent':
            unsubmitted.push(...part.positions);
            report.unsent = true;
            if (part.error !== undefined) fail(part.error);
            break;
        }
      }
      run.progress.batchDone(counts, report);
    }
  };

  try {
    await Promise.all(Array.from({ length: run.concurrency }, (_, n) => worker(n)));
  } finally {
    run.signal?.removeEventListener('abort', interrupt);
    await batches.return(undefined);
    await errors.close();
    run.progress.clear();
  }

  const stopped =
    reasons.size === 0 && !interrupted
      ? undefined
      : describeUndone({
          reasons: interrupted ? ['interrupted', ...reasons] : [...reasons],
          unknown,
          unsubmitted,
          unbatchedFrom: readAll ? undefined : batchedUpTo,
          submittedAny: counts.submitted > 0,
        });
  return {
    ...counts,
    errorLines: errors.lines,
    seconds: (performance.now() - startedAt) / 1000,
    stopped,
    interrupted,
    anyFailed: counts.failed + replayedFailures > 0,
  };
}
