import type { SheetRow } from '../../../src/spreadsheets/csv-rows.ts';
import type { XlsxAnswer, XlsxRequest } from './xlsx-protocol.ts';

/**
 * An XLSX file read by the worker. Its rows can be read again and again (the check, the preview, the
 * submission, placing errors), also at once, without reading the file again.
 */
export interface XlsxFile {
  /** The rows of the first sheet, pulled from the worker a slice at a time. */
  rows(): AsyncGenerator<SheetRow>;
  /** How long the worker took to read the workbook. */
  readMilliseconds: number;
  /** Ends the worker and frees what it holds. */
  close(): void;
}

type RowsAnswer = Extract<XlsxAnswer, { type: 'rows' }>;

/**
 * Starts a worker that reads `file` (see `xlsx-worker.ts`); resolves when it has read it. The worker's
 * script, and `exceljs` inside it, are fetched only here, when an XLSX file is chosen: Vite emits the
 * worker as a file of its own, so the dashboard's main bundle does not carry `exceljs`.
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
    if (answer.type !== 'rows') return opened.resolve(answer);
    waiting.get(answer.id)?.resolve(answer);
    waiting.delete(answer.id);
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
    const why = first.type === 'failed' ? first.message : 'no answer';
    throw new Error(`it is not an XLSX workbook that can be read (${why})`);
  }
  let requests = 0;
  const slice = (from: number) =>
    new Promise<RowsAnswer>((resolve, reject) => {
      const id = ++requests;
      waiting.set(id, { resolve, reject });
      send({ type: 'rows', id, from });
    });
  return {
    async *rows() {
      for (let from = 0; ;) {
        const answer = await slice(from);
        yield* answer.rows;
        if (answer.done) return;
        from += answer.rows.length;
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
