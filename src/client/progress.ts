/** The running totals of an ingestion, in items. */
export interface Counts {
  read: number;
  submitted: number;
  upserted: number;
  failed: number;
}

/** Where progress goes: a line per completed batch, or one updating line on a terminal. */
export interface Progress {
  /** Counts changed (an item read, a batch submitted); redraws the line on a terminal. */
  update(counts: Counts): void;
  /** A batch reached its terminal state and its errors are written. */
  batchDone(counts: Counts, batch: { seq: number; id: string; status: string }): void;
  /** A request is waiting before a retry. */
  retrying(reason: string, waitMs: number): void;
  /** Clears the updating line so that the next output starts on a clean line. */
  clear(): void;
}

const REDRAW_EVERY_MS = 200;

/** `12 000 read, …, 812 items/s`: the totals and the settle rate since `startedAt`. */
export function describeCounts(counts: Counts, startedAt: number): string {
  const seconds = Math.max(0.001, (performance.now() - startedAt) / 1000);
  const rate = Math.round((counts.upserted + counts.failed) / seconds);
  return (
    `read ${counts.read}, submitted ${counts.submitted}, upserted ${counts.upserted}, ` +
    `failed ${counts.failed}, ${rate} items/s`
  );
}

/** Progress on `stream` (stderr); silent when `quiet`. */
export function createProgress(
  stream: NodeJS.WritableStream & { isTTY?: boolean },
  { quiet, startedAt }: { quiet: boolean; startedAt: number },
): Progress {
  const tty = stream.isTTY === true;
  let drawnAt = 0;
  let drawn = false;

  const draw = (text: string) => {
    stream.write(`\r\x1b[2K${text}`);
    drawn = true;
    drawnAt = performance.now();
  };
  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };

  if (quiet) return { update() {}, batchDone() {}, retrying() {}, clear() {} };
  return {
    update(counts) {
      if (tty && performance.now() - drawnAt >= REDRAW_EVERY_MS) draw(describeCounts(counts, startedAt));
    },
    batchDone(counts, { seq, id, status }) {
      if (tty) draw(describeCounts(counts, startedAt));
      else stream.write(`batch ${seq} ${id} ${status}: ${describeCounts(counts, startedAt)}\n`);
    },
    retrying(reason, waitMs) {
      clear();
      stream.write(`${reason}; retrying in ${(waitMs / 1000).toFixed(1)} s\n`);
    },
    clear,
  };
}
