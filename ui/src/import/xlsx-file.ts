import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';
import type { XlsxAnswer, XlsxRequest } from './xlsx-protocol.ts';

/**
 * An XLSX file read by the worker. Its rows can be read again and again (the check, the preview, the
 * submission, placing errors), also at once: each reading is the worker's reading of the file again.
 */
export interface XlsxFile {
  /** The rows of the first sheet, pulled from the worker a slice at a time. */
  rows(): AsyncGenerator<SheetRow>;
  /** How long the worker took to open the workbook (its directory, first sheet and shared strings). */
  readMilliseconds: number;
  /** Ends the worker and frees what it holds. */
  close(): void;
}

type RowsAnswer = Extract<XlsxAnswer, { type: 'rows' }>;

/**
 * Starts a worker that reads `file` (see `xlsx-worker.ts`); resolves when it has opened it, or
 * rejects with the reader's message (`it is not an XLSX workbook that can be read (…)`). The worker's
 * script is fetched only here, when an XLSX file is chosen: Vite emits it as a file of its own.
 */
export async function openXlsxFile(file: File): Promise<XlsxFile> {
  const worker = new Worker(new URL('./xlsx-worker.ts', import.meta.url), { type: 'module' });
  const send = (request: XlsxRequest) => worker.postMessage(request);
  const waiting = new Map<
    number,
    { resolve: (answer: RowsAnswer) => void; reject: (error: Error) => void }
  >();
  let opened!: { resolve: (answer: XlsxAnswer) => void; reject: (error: Error) => void };
  const openedAnswer = new Promise<XlsxAnswer>((resolve, reject) => (opened = { resolve, reject }));
  worker.onmessage = (event: MessageEvent<XlsxAnswer>) => {
    const answer = event.data;
    if (answer.type === 'rows') {
      waiting.get(answer.id)?.resolve(answer);
      waiting.delete(answer.id);
    } else if (answer.type === 'failed' && answer.id !== undefined) {
      waiting.get(answer.id)?.reject(new Error(answer.message));
      waiting.delete(answer.id);
    } else {
      opened.resolve(answer);
    }
  };
  worker.onerror = (event) => {
    const error = new Error(event.message || 'the XLSX reader stopped');
    opened.reject(error);
    for (const pending of waiting.values()) pending.reject(error);
    waiting.clear();
  };
  send({ type: 'open', file });
  const first = await openedAnswer.catch((error: unknown) => {
    worker.terminate();
    throw error;
  });
  if (first.type !== 'opened') {
    worker.terminate();
    throw new Error(first.type === 'failed' ? first.message : 'the XLSX reader gave no answer');
  }
  let requests = 0;
  let cursors = 0;
  const slice = (cursor: number) =>
    new Promise<RowsAnswer>((resolve, reject) => {
      const id = ++requests;
      waiting.set(id, { resolve, reject });
      send({ type: 'rows', id, cursor });
    });
  return {
    async *rows() {
      const cursor = ++cursors;
      let done = false;
      try {
        while (!done) {
          const answer = await slice(cursor);
          done = answer.done;
          yield* answer.rows;
        }
      } finally {
        // A reading left before its end (a refused layout, a closed preview) frees the worker's.
        if (!done) send({ type: 'close', cursor });
      }
    },
    readMilliseconds: first.milliseconds,
    close: () => {
      worker.terminate();
      // A terminated worker answers nothing, and `onerror` does not fire: without this, a reading of
      // the file closed (a preview, a submission) would wait for ever instead of ending.
      const closed = new Error('the file was closed');
      for (const pending of waiting.values()) pending.reject(closed);
      waiting.clear();
    },
  };
}
