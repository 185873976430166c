import { batchLabel, nameLabelBase } from '../../../src/client/batch-label.ts';
import type { FieldError } from '../../../src/import-pipeline/problem-answer.ts';
import { abortableSleep, submitInParts } from '../../../src/import-pipeline/batch-submission.ts';
import { batchesOf, MAX_BATCH_ITEMS, type WellFormedItem } from '../../../src/import-pipeline/batches.ts';
import type { SourceItem } from '../../../src/import-pipeline/file-items.ts';
import type { Submitter } from '../../../src/import-pipeline/pipeline-sides.ts';

/**
 * The dashboard's submission of a file (docs/ui.md, "Import"), without a page: which items go, under
 * which run, and what to do on a resume. Batching, keys, halves and 429 waits are the import
 * pipeline's (docs/import-pipeline.md); the view supplies the service (`pageSubmitter`) and shows what
 * this tells its `SubmissionScreen`. Tested in Node (test/ui/import-submission.test.ts).
 */

/** Which items a submission sends: all that can be sent, or only those the preview found valid (#47). */
export type SendMode = 'all' | 'valid';

/** A part of a batch the service accepted: the file positions and lines (rows) of its items, by index. */
export interface SubmittedPart {
  /** The batch's place among the file's batches, from 1 (its halves share it). */
  seq: number;
  batchId: string;
  replayed: boolean;
  positions: number[];
  lines: number[];
}

/** An item the service refused even on its own (400, 413), so it is in no batch. */
export interface RefusedItem {
  position: number;
  line: number;
  errors: FieldError[];
}

/** What a submission tells the page as it goes. */
export interface SubmissionScreen {
  /** Batch `seq` of about `batches` is being sent. */
  sending(seq: number, batches: number): void;
  /** The service asked to wait `waitMs` (429) before batch `seq` is sent again. */
  waiting(waitMs: number, seq: number): void;
  accepted(part: SubmittedPart): void;
  refused(item: RefusedItem): void;
}

/** What one call of `send` came to: every batch sent, or the batch it stopped at (and why, unless stopped). */
export type SubmissionEnd = { done: true; batches: number } | { done: false; seq: number; error: unknown };

/** What a submission sends and to whom it reports. */
export interface SendRequest {
  /** The file's items, read from its start. */
  items: AsyncIterable<SourceItem>;
  mode: SendMode;
  /** Positions left out in `valid` mode (the preview's invalid items). */
  invalid: ReadonlySet<number>;
  /** The file's name, the base of the batches' labels. */
  fileName: string;
  /** How many items will be sent, for the labels' `<k>/<n>`. */
  itemCount: number;
  screen: SubmissionScreen;
  /** Aborted when the page leaves the file: nothing more is sent. */
  signal: AbortSignal;
}

/**
 * One file's submissions. The first `send`, or one in another mode, is a new run with a new id;
 * sending again in the same mode after a failure resumes: the batches already settled are skipped,
 * and the others go under the same keys, so a part the service stored is answered as a replay and
 * listed once.
 */
export class ImportSubmission {
  #runId = '';
  #mode: SendMode | null = null;
  /** Batches (by seq) whose every part was accepted or refused. */
  readonly #settled = new Set<number>();
  readonly #batchIds = new Set<string>();
  /** Every accepted part, in the order they were accepted. */
  readonly parts: SubmittedPart[] = [];

  constructor(
    private readonly submitter: Submitter,
    private readonly options: {
      newRunId?: () => string;
      sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
    } = {},
  ) {}

  /** The id of the current run, from which every key is made. */
  get runId(): string {
    return this.#runId;
  }

  /** Sends the file's items of `request.mode`, resuming the last run when it is of the same mode. */
  async send(request: SendRequest): Promise<SubmissionEnd> {
    if (request.mode !== this.#mode) {
      // "Valid only" and "all" cut other batches: their keys must never answer for one another.
      this.#runId = (this.options.newRunId ?? (() => crypto.randomUUID()))();
      this.#mode = request.mode;
      this.#settled.clear();
      this.#batchIds.clear();
      this.parts.length = 0;
    }
    const { screen, signal } = request;
    const lines = new Map<number, number>();
    async function* sendable(): AsyncGenerator<WellFormedItem> {
      for await (const item of request.items) {
        if (item.text === undefined) continue;
        if (request.mode === 'valid' && request.invalid.has(item.position)) continue;
        lines.set(item.position, item.line);
        yield { position: item.position, text: item.text };
      }
    }
    const total = Math.ceil(request.itemCount / MAX_BATCH_ITEMS);
    const labelBase = nameLabelBase(request.fileName);
    let batches = 0;
    for await (const batch of batchesOf(sendable())) {
      batches = batch.seq;
      const lineOf = new Map(batch.positions.map((position) => [position, lines.get(position) ?? 0]));
      for (const position of batch.positions) lines.delete(position);
      if (this.#settled.has(batch.seq)) continue;
      if (signal.aborted) return { done: false, seq: batch.seq, error: undefined };
      screen.sending(batch.seq, total);
      const parts = submitInParts(this.submitter, batch, signal, {
        runId: this.#runId,
        // Labelled as the command-line client labels its batches: `<file name> <k>/<n>`.
        label: batchLabel(labelBase, batch.seq, total),
        onWait: (waitMs) => screen.waiting(waitMs, batch.seq),
        sleep: this.options.sleep ?? abortableSleep,
      });
      for await (const part of parts) {
        switch (part.kind) {
          case 'accepted': {
            if (this.#batchIds.has(part.batchId)) break;
            this.#batchIds.add(part.batchId);
            const lines = part.positions.map((position) => lineOf.get(position) ?? 0);
            const submitted = { seq: batch.seq, batchId: part.batchId, replayed: part.replayed, lines };
            this.parts.push({ ...submitted, positions: part.positions });
            screen.accepted(this.parts.at(-1)!);
            break;
          }
          case 'refused':
            screen.refused({
              position: part.position,
              line: lineOf.get(part.position) ?? 0,
              errors: part.errors,
            });
            break;
          case 'unsent':
            return { done: false, seq: batch.seq, error: part.error };
        }
      }
      this.#settled.add(batch.seq);
    }
    return { done: true, batches };
  }
}
