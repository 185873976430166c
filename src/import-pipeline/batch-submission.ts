import { envelope, type Items } from './batches.ts';
import { CLIENT_ERROR_CODES } from './file-format.ts';
import { partKey } from './idempotency-keys.ts';
import type { FieldError } from './problem-answer.ts';
import type { Refusal, Submitter } from './pipeline-sides.ts';
import { retryAfterMs } from './retry-after.ts';

/** What became of the items of a batch, part by part, in file order. */
export type PartOutcome =
  /** The service accepted these items as the batch `batchId`; `replayed`: it had stored them before. */
  | { kind: 'accepted'; positions: number[]; batchId: string; replayed: boolean }
  /** The service refused this item even on its own; `errors` say why. */
  | { kind: 'refused'; position: number; errors: FieldError[] }
  /** These items were not submitted: `error` stopped it, or, when undefined, the run was stopping. */
  | { kind: 'unsent'; positions: number[]; error: unknown };

/** How a batch is sent: its run's keys, its label, and what a wait on a 429 tells the screen. */
export interface SubmitOptions {
  /** The run's id, from which each part's Idempotency-Key is made (idempotency-keys.ts); none sends no key. */
  runId?: string | undefined;
  /** The batch's label (docs/batch-labels.md), the same on each of its parts. */
  label?: string | undefined;
  /** Told before each wait a 429 asks for, with the positions of the part that waits. */
  onWait?: (waitMs: number, positions: readonly number[]) => void;
  /** How a wait is made (tests pass a fake clock); rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Whether the service refused the body as a whole, so that a smaller body may pass (400, 413). */
const refusedAsWhole = (refusal: Refusal | undefined): refusal is Refusal =>
  refusal?.status === 400 || refusal?.status === 413;

/** Why a lone item was refused: the problem's `errors[]`, else one error with the client's code. */
function refusalErrors(refusal: Refusal): FieldError[] {
  if (refusal.errors) return refusal.errors;
  return refusal.status === 413
    ? [
        {
          field: '',
          code: CLIENT_ERROR_CODES.payloadTooLarge,
          message: `The item alone is larger than the service accepts: 413 ${refusal.detail}`,
        },
      ]
    : [
        {
          field: '',
          code: CLIENT_ERROR_CODES.invalidBody,
          message: `The service refused the item as a request body: 400 ${refusal.detail}`,
        },
      ];
}

/** A wait of `ms` that ends early, rejecting, when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

/**
 * Submits `items` as one batch. When the service refuses the body as a whole (400: one item nests
 * too deep; 413: too large), the items are split in halves and each half sent again, down to single
 * items, so that one bad item costs itself only. A 429 is waited out for its Retry-After and the
 * same part sent again under the same key. Yields each part's outcome as soon as it is known, so the
 * caller can follow an accepted part while the rest waits; once `stop` is aborted (which also cuts
 * short a wait), or a submission fails otherwise, the parts not yet sent come out as one `unsent` and
 * nothing more is sent. Each part's texts (`items.texts` too) are dropped once they are sent, so a
 * batch being followed holds its positions only.
 */
export async function* submitInParts(
  submitter: Submitter,
  items: Items,
  stop: AbortSignal,
  { runId, label, onWait = () => {}, sleep = abortableSleep }: SubmitOptions = {},
): AsyncGenerator<PartOutcome> {
  // The parts still to send, the next one last, so that they go out in file order.
  const pending: Items[] = [items];
  const unsent = (): number[] => pending.reverse().flatMap((part) => part.positions);
  for (let part = pending.pop(); part !== undefined; part = pending.pop()) {
    if (stop.aborted) {
      pending.push(part);
      yield { kind: 'unsent', positions: unsent(), error: undefined };
      return;
    }
    let outcome: PartOutcome | undefined;
    try {
      const idempotencyKey = runId === undefined ? undefined : partKey(runId, part);
      const answer = await submitter.submit(envelope(part.texts), { signal: stop, idempotencyKey, label });
      outcome = {
        kind: 'accepted',
        positions: part.positions,
        batchId: answer.batch_id,
        replayed: answer.replayed,
      };
    } catch (error) {
      const refusal = submitter.refusal(error);
      if (refusal?.status === 429 && !stop.aborted) {
        const wait = retryAfterMs(refusal.retryAfter);
        onWait(wait, part.positions);
        // The same part again, under the same key: nothing was stored (a 429 consumes no key).
        pending.push(part);
        await sleep(wait, stop).catch(() => {});
        continue;
      }
      if (!refusedAsWhole(refusal)) {
        pending.push(part);
        // Once the run is stopping, a submission cut short (or failing meanwhile) adds no reason.
        yield { kind: 'unsent', positions: unsent(), error: stop.aborted ? undefined : error };
        return;
      }
      if (part.texts.length === 1) {
        outcome = { kind: 'refused', position: part.positions[0]!, errors: refusalErrors(refusal) };
      } else {
        const half = Math.ceil(part.texts.length / 2);
        pending.push(
          { positions: part.positions.slice(half), texts: part.texts.slice(half) },
          { positions: part.positions.slice(0, half), texts: part.texts.slice(0, half) },
        );
      }
    }
    // Sent, or handed to its halves: while the caller follows the part, only positions are kept (in
    // `items` too, which the caller holds until the whole batch is done).
    part.texts = [];
    if (outcome) yield outcome;
  }
}
