import type { FieldError } from './problem-answer.ts';

/**
 * One import pipeline for the command-line client and the dashboard (docs/import-pipeline.md). This
 * folder is the part they share, and it imports no Node.js module, so Vite bundles it for the page:
 *
 * - reading to items (`file-items.ts`): JSON, JSON Lines and spreadsheet rows become numbered items,
 *   one rule for blank lines and for a line that is not JSON;
 * - batching (`batches.ts`): at most 1000 items and 30 MiB a batch;
 * - submission (`batch-submission.ts`): one Idempotency-Key per part (`idempotency-keys.ts`), a batch
 *   refused as a whole (400, 413) sent again in halves, a 429 waited out for its Retry-After
 *   (`retry-after.ts`);
 * - preview (`preview-items.ts`): the dry run, cut and asked as a submission is, for the client's
 *   `--dry-run` and the dashboard's preview;
 * - error placement (`error-places.ts`): a batch's item errors named by the file's position, line,
 *   row and column.
 *
 * What each side supplies, and nothing more:
 *
 * - **the file**: text chunks (JSON, JSON Lines) or spreadsheet rows. The client reads them with
 *   Node's file streams (`src/client/json-stream.ts`, `sheet-stream.ts`), the dashboard from a `File`
 *   on the page, or an XLSX through its Web Worker (`ui/src/import/file-items.ts`);
 * - **the service**: a {@link Submitter}, over the client's `IngestionClient` (`src/client/cli-submitter.ts`)
 *   or the page's `call` (`ui/src/import/page-submitter.ts`), and for a preview an `ask` function
 *   (`src/client/preview-runner.ts`, `ui/src/import/preview-run.ts`);
 * - **the screen**: what the parts' outcomes become, lines on the terminal and in the errors file
 *   (`src/client/ingest-runner.ts`) or tables on the page (`ui/src/import/import-submission.ts` and
 *   `ui/src/views/import.ts`).
 */

/** Why the service refused a request, as the side's HTTP layer read it. */
export interface Refusal {
  status: number;
  /** The problem's `detail` (or the side's sentence for it). */
  detail: string;
  /** The problem's `errors[]`, when it named fields. */
  errors?: FieldError[] | undefined;
  /** The `Retry-After` header of a 429, as sent. */
  retryAfter?: string | null | undefined;
}

/** The 202 of a submission; `replayed` when the service answered `Idempotent-Replayed: true`. */
export interface SubmitAccepted {
  batch_id: string;
  replayed: boolean;
}

/** How a side sends a submission to the service. */
export interface Submitter {
  /**
   * Sends the envelope `body`; resolves on the 202. `signal` ends the waits between attempts of the
   * side's own retries (5xx, network), never a request in flight.
   */
  submit(
    body: string,
    options: { signal: AbortSignal; idempotencyKey?: string | undefined; label?: string | undefined },
  ): Promise<SubmitAccepted>;
  /** The service's refusal `error` carries, or undefined when it is none (network, abort, a bug). */
  refusal(error: unknown): Refusal | undefined;
}
