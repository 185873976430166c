import { setTimeout as sleep } from 'node:timers/promises';
import {
  describeFieldErrors,
  readProblem,
  type FieldError,
  type ProblemAnswer,
} from '../import-pipeline/problem-answer.ts';
import type { DiffElementText } from './diff-text.ts';
import { retryAfterMs } from '../import-pipeline/retry-after.ts';

// The client speaks to the service over HTTP only and is written against docs/reference.md alone: it imports
// nothing from the service's code, so it can be lifted out and run against any deployment.

/** A batch's status record (docs/reference.md §6). */
export interface BatchStatusRecord {
  batch_id: string;
  status: string;
  received_count: number;
  validated_ok: number;
  validated_failed: number;
  upserted: number;
  failed: number;
  created_at: string;
  updated_at: string;
}

/** One failed item of a batch, with every error it has (docs/reference.md §7). */
export interface ItemErrorRecord {
  index: number;
  external_id: string | null;
  sku: string | null;
  errors: FieldError[];
}

/** The answer of `POST /products/ingestions/preview` (docs/reference.md §10.3). */
export interface PreviewAnswer {
  received_count: number;
  summary: { create: number; update: number; unchanged: number; invalid: number };
  data: Array<{
    index: number;
    external_id: string | null;
    action: 'create' | 'update' | 'unchanged' | 'invalid';
    changes: string[];
    /** The values of `changes` (docs/reference.md §11.2); absent from a service older than it. */
    diff?: DiffElementText[];
    errors: FieldError[];
    /** Present when an added variant's sku equals a stored one once leading zeros are dropped (docs/spreadsheets.md). */
    warnings?: SkuWarningText[];
  }>;
}

/** A preview warning as the client uses it: an item error's shape, with the two skus. */
export type SkuWarningText = FieldError & { sku: string; stored_sku: string };

/**
 * The 202 of a submission; `replayed` when the service answered with `Idempotent-Replayed: true`
 * (docs/reference.md §10.2): the key's batch was stored before, and nothing was stored now.
 */
export interface SubmitAnswer {
  batch_id: string;
  received_count: number;
  replayed: boolean;
}

/** A refusal that waiting will not cure (401, 403, 4xx), or a 5xx / network failure after every retry. */
export class ClientError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    /** What the service's last answer said, when it answered. */
    readonly problem?: ProblemAnswer,
  ) {
    super(message);
  }
}

/** What the client needs: where the service is, the bearer token, and how patient to be. */
export interface ClientOptions {
  baseUrl: string;
  token: string;
  /**
   * The waits before each retry of a 5xx or network failure (default `DEFAULT_BACKOFF_MS`); its length
   * is the number of retries.
   */
  backoffMs?: readonly number[];
  /** The first and the longest wait between two status polls of a running batch. */
  pollMs?: { first: number; max: number };
  /** Told of each wait before a retry (429, 5xx, network), so progress can show it. */
  onRetry?: (reason: string, waitMs: number) => void;
  /**
   * Appended to the error when the service is not there at all (see {@link NOT_THERE}): what the
   * caller can do about the address, e.g. which option sets it.
   */
  addressHint?: string;
}

/**
 * Network failures that, before the service has ever answered, mean nothing listens at the address
 * (connection refused) or the host does not exist: almost always a wrong address, which retrying
 * for a minute would not cure. Once the service has answered, they are a restart and are retried.
 */
const NOT_THERE = new Set(['ECONNREFUSED', 'ENOTFOUND']);

/** The ingestion API (operations 1–3) over HTTP, with retries. */
export interface IngestionClient {
  /**
   * Submits an envelope `{"items": [...]}` given as JSON text; resolves on the 202. `signal` ends the
   * waits between attempts (the promise rejects with an AbortError), never a request in flight: a
   * batch the service may be accepting right then must not be lost from sight.
   */
  submit(
    bodyJson: string,
    options?: { signal?: AbortSignal; idempotencyKey?: string; label?: string },
  ): Promise<SubmitAnswer>;
  /** What the service says submitting the envelope would do (docs/reference.md §10.3); nothing is stored. */
  preview(bodyJson: string, options?: { signal?: AbortSignal }): Promise<PreviewAnswer>;
  /** Polls a batch until its state is terminal; resolves with that final record. */
  waitUntilTerminal(batchId: string): Promise<BatchStatusRecord>;
  /** Every error record of a batch, page by page (limit 500), following the cursors to the end. */
  errorRecords(batchId: string): AsyncGenerator<ItemErrorRecord[]>;
}

/**
 * The waits before each retry of a 5xx or a network failure: about a minute in all, so a service that
 * restarts or fails over (a deployment, a database switch) does not end a run of hours.
 */
export const DEFAULT_BACKOFF_MS: readonly number[] = [500, 1000, 2000, 4000, 8000, 15_000, 30_000];
const TERMINAL = new Set(['completed', 'completed_with_errors', 'failed']);
const SUBMIT_TIMEOUT_MS = 120_000;
const READ_TIMEOUT_MS = 30_000;

/** Why fetch failed, in a few words (`ECONNREFUSED`, a timeout). */
function networkReason(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer in time';
  const cause =
    error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  if (typeof cause?.code === 'string') return cause.code;
  if (typeof cause?.message === 'string') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/** A submission's 202: the batch, and whether it was a replay (`Idempotent-Replayed: true`). */
async function readSubmitAnswer(response: Response): Promise<SubmitAnswer> {
  const { batch_id, received_count } = (await response.json()) as Omit<SubmitAnswer, 'replayed'>;
  return { batch_id, received_count, replayed: response.headers.get('idempotent-replayed') === 'true' };
}

/** A client for the service at `options.baseUrl`. */
export function createIngestionClient(options: ClientOptions): IngestionClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const backoff = options.backoffMs ?? DEFAULT_BACKOFF_MS;
  const poll = options.pollMs ?? { first: 100, max: 1000 };
  const onRetry = options.onRetry ?? (() => {});
  /** Whether the service has answered any request of this client yet. */
  let answered = false;

  /**
   * One request: a 429 waits as long as `Retry-After` says and tries again (the service asked for it),
   * a 5xx or network failure is retried after each wait of `backoff`, anything else is final.
   */
  async function call<T>(
    method: 'GET' | 'POST',
    path: string,
    body?: string,
    signal?: AbortSignal,
    extraHeaders: Record<string, string> = {},
    read: (response: Response) => Promise<T> = async (response) => (await response.json()) as T,
  ): Promise<T> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.token}`,
      accept: 'application/json',
      ...extraHeaders,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const timeout = method === 'POST' ? SUBMIT_TIMEOUT_MS : READ_TIMEOUT_MS;
    for (let failures = 0; ;) {
      let reason: string;
      let status: number | undefined;
      let problem: ProblemAnswer | undefined;
      try {
        const response = await fetch(base + path, {
          method,
          headers,
          body,
          signal: AbortSignal.timeout(timeout),
        });
        answered = true;
        if (response.ok) return await read(response);
        status = response.status;
        problem = await readProblem(response);
        const { detail, errors } = problem;
        if (status === 429) {
          const wait = retryAfterMs(response.headers.get('retry-after'));
          onRetry(`${method} ${path} answered 429 (${detail})`, wait);
          await sleep(wait, undefined, { signal });
          continue;
        }
        if (status === 401 || status === 403) {
          throw new ClientError(`the service refused the token: ${status} ${detail}`, status, problem);
        }
        reason = `${method} ${path} answered ${status}: ${detail}`;
        if (status < 500) {
          const listed = errors ? `\n${describeFieldErrors(errors)}` : '';
          throw new ClientError(`${reason}${listed}`, status, problem);
        }
      } catch (error) {
        // A refusal is final, and so is a wait for a 429 cut short by `signal`.
        if (error instanceof ClientError || signal?.aborted) throw error;
        const cause = networkReason(error);
        reason = `cannot reach ${base}: ${cause}`;
        if (!answered && NOT_THERE.has(cause)) {
          throw new ClientError(
            `${reason}${options.addressHint ? ` (${options.addressHint})` : ''}`,
            undefined,
          );
        }
      }
      const wait = backoff[failures++];
      if (wait === undefined) {
        throw new ClientError(`${reason} (gave up after ${failures} attempts)`, status, problem);
      }
      onRetry(reason, wait);
      await sleep(wait, undefined, { signal });
    }
  }

  return {
    // Every attempt of a submission carries the same key, so a retry after a lost answer is a replay.
    submit: (bodyJson, { signal, idempotencyKey, label } = {}) =>
      call(
        'POST',
        label === undefined
          ? '/products/ingestions'
          : `/products/ingestions?label=${encodeURIComponent(label)}`,
        bodyJson,
        signal,
        idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
        readSubmitAnswer,
      ),

    preview: (bodyJson, { signal } = {}) => call('POST', '/products/ingestions/preview', bodyJson, signal),

    async waitUntilTerminal(batchId) {
      for (let wait = poll.first; ; wait = Math.min(poll.max, wait * 2)) {
        const record = await call<BatchStatusRecord>(
          'GET',
          `/products/ingestions/${encodeURIComponent(batchId)}`,
        );
        if (TERMINAL.has(record.status)) return record;
        await sleep(wait);
      }
    },

    async *errorRecords(batchId) {
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const page: { data: ItemErrorRecord[]; next_cursor: string | null } = await call(
          'GET',
          `/products/ingestions/${encodeURIComponent(batchId)}/errors?limit=500${query}`,
        );
        yield page.data;
        cursor = page.next_cursor;
      } while (cursor !== null);
    },
  };
}
