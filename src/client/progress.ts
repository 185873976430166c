import { describePositions } from './position-ranges.ts';

/**
 * The running totals of an ingestion, in items. `replayed` counts the items of batches the service
 * answered as replays (stored by an earlier attempt of the run, docs/reference.md §11.6); they are in neither
 * `upserted` nor `failed`, so that `upserted + failed + replayed` is what was read once a run ends.
 */
export interface Counts {
  read: number;
  submitted: number;
  upserted: number;
  failed: number;
  replayed: number;
}

/** What became of one batch cut from the file, once all of it is settled. */
export interface BatchReport {
  /** 1-based order in which the batch was cut from the file. */
  seq: number;
  /** The file positions of its items, ascending. */
  positions: readonly number[];
  /**
   * Each part the service accepted, by its batch id and terminal status (a batch refused as a whole
   * is sent again in halves); `status` is `outcome unknown` when it could not be read; `replayed`
   * when the service answered its submission as a replay.
   */
  parts: Array<{ id: string; status: string; replayed: boolean }>;
  /** Whether some of its items were not submitted (the run was stopping). */
  unsent: boolean;
}

/** Where progress goes: a line per finished batch, in batch order, or one updating line on a terminal. */
export interface Progress {
  /** Counts changed (an item read, a batch submitted); redraws the line on a terminal. */
  update(counts: Counts): void;
  /** The file is, or will be, cut into `count` batches in all. */
  batchesCut(count: number): void;
  /** A batch is settled: every part terminal and its errors written, or not sent. */
  batchDone(counts: Counts, batch: BatchReport): void;
  /** A request is waiting before a retry. */
  retrying(reason: string, waitMs: number): void;
  /** Clears the updating line so that the next output starts on a clean line. */
  clear(): void;
}

const REDRAW_EVERY_MS = 200;

/** `12 000 read, …, 812 items/s`: the totals and the settle rate since `startedAt`. */
export function describeCounts(counts: Counts, startedAt: number): string {
  const seconds = Math.max(0.001, (performance.now() - startedAt) / 1000);
  const rate = Math.round((counts.upserted + counts.failed + counts.replayed) / seconds);
  return (
    `read ${counts.read}, submitted ${counts.submitted}, upserted ${counts.upserted}, ` +
    `failed ${counts.failed}, ${counts.replayed > 0 ? `replayed ${counts.replayed}, ` : ''}${rate} items/s`
  );
}

/**
 * `batch 3 of 12 (positions 2000–2999) 01934f5e-… completed_with_errors`: which batch, and what
 * became of it, `replayed` after a part the service had stored before. `of 12` once the number of
 * batches is known.
 */
export function describeBatch(batch: BatchReport, total: number | null): string {
  const of = total === null ? '' : ` of ${total}`;
  const parts = batch.parts.map((part) => `${part.id} ${part.status}${part.replayed ? ' replayed' : ''}`);
  if (batch.unsent) parts.push(parts.length === 0 ? 'not submitted' : 'the rest not submitted');
  // No part accepted and none unsent: the service refused each item on its own.
  const outcome = parts.join(', ') || 'every item refused';
  return `batch ${batch.seq}${of} (positions ${describePositions(batch.positions, 3)}) ${outcome}`;
}

/**
 * Progress on `stream` (stderr); silent when `quiet`. Batches finish out of order when several are
 * in flight; their lines are held back until every earlier batch's is out, so they read in file order.
 */
export function createProgress(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  { quiet, startedAt }: { quiet: boolean; startedAt: number },
): Progress {
  const tty = stream.isTTY === true;
  let drawnAt = 0;
  let drawn = false;
  let total: number | null = null;
  /** Settled batches whose line waits for an earlier batch, by seq. */
  const held = new Map<number, BatchReport>();
  let nextSeq = 1;

  const draw = (text: string) => {
    stream.write(`\r\x1b[2K${text}`);
    drawn = true;
    drawnAt = performance.now();
  };
  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  const show = (batch: BatchReport, counts: Counts) => {
    // A batch of which nothing was sent is named in the run's final report instead.
    if (batch.parts.length === 0 && batch.unsent) return;
    const line = `${describeBatch(batch, total)}: ${describeCounts(counts, startedAt)}`;
    if (tty) draw(line);
    else stream.write(`${line}\n`);
  };

  if (quiet) return { update() {}, batchesCut() {}, batchDone() {}, retrying() {}, clear() {} };
  return {
    update(counts) {
      if (tty && performance.now() - drawnAt >= REDRAW_EVERY_MS) draw(describeCounts(counts, startedAt));
    },
    batchesCut(count) {
      total = count;
    },
    batchDone(counts, batch) {
      held.set(batch.seq, batch);
      for (let next = held.get(nextSeq); next; next = held.get(nextSeq)) {
        held.delete(nextSeq++);
        show(next, counts);
      }
    },
    retrying(reason, waitMs) {
      clear();
      stream.write(`${reason}; retrying in ${(waitMs / 1000).toFixed(1)} s\n`);
    },
    clear,
  };
}
