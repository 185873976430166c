import { envelope, type Items } from './batches.ts';
import { CLIENT_ERROR_CODES } from './errors-file.ts';
import { partKey } from './idempotency-keys.ts';
import { ClientError, type IngestionClient } from './ingestion-client.ts';
import type { FieldError } from './problem-answer.ts';

/** What became of the items of a batch, part by part, in file order. */
export type PartOutcome =
  /** The service accepted these items as the batch `batchId`; `replayed`: it had stored them before. */
  | { kind: 'accepted'; positions: number[]; batchId: string; replayed: boolean }
  /** The service refused this item even on its own; `errors` say why. */
  | { kind: 'refused'; position: number; errors: FieldError[] }
  /** These items were not submitted: `error` stopped it, or, when undefined, the run was stopping. */
  | { kind: 'unsent'; positions: number[]; error: unknown };

/** Whether the service refused the body as a whole, so that a smaller body may pass (400, 413). */
const refusedAsWhole = (error: unknown): error is ClientError =>
  error instanceof ClientError && (error.status === 400 || error.status === 413);

/** Why a lone item was refused: the problem's `errors[]`, else one error with the client's code. */
function refusal(error: ClientError): FieldError[] {
  if (error.problem?.errors) return error.problem.errors;
  const detail = error.problem?.detail ?? error.message;
  return error.status === 413
    ? [
        {
          field: '',
          code: CLIENT_ERROR_CODES.payloadTooLarge,
          message: `The item alone is larger than the service accepts: 413 ${detail}`,
        },
      ]
    : [
        {
          field: '',
          code: CLIENT_ERROR_CODES.invalidBody,
          message: `The service refused the item as a request body: 400 ${detail}`,
        },
      ];
}

/**
 * Submits `items` as one batch. When the service refuses the body as a whole (400: one item nests
 * too deep; 413: too large), the items are split in halves and each half sent again, down to single
 * items, so that one bad item costs itself only. Yields each part's outcome as soon as it is known, so
 * the caller can follow an accepted part while the rest waits; once `stop` is aborted (which also cuts
 * short a submission's wait before its next attempt), or a submission fails otherwise, the parts not
 * yet sent come out as one `unsent` and nothing more is sent. Each part's texts (`items.texts` too)
 * are dropped once they are sent, so a batch being followed holds its positions only.
 */
export async function* submitInParts(
  client: IngestionClient,
  items: Items,
  stop: AbortSignal,
  /**
   * `runId`: the run's id, from which each part's Idempotency-Key is made (idempotency-keys.ts); none
   * sends no key. `label`: the batch's label (CONTRACT §11.1), the same on each of its parts.
   */
  { runId, label }: { runId?: string; label?: string } = {},
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
      const answer = await client.submit(envelope(part.texts), { signal: stop, idempotencyKey, label });
      outcome = {
        kind: 'accepted',
        positions: part.positions,
        batchId: answer.batch_id,
        replayed: answer.replayed,
      };
    } catch (error) {
      if (!refusedAsWhole(error)) {
        pending.push(part);
        // Once the run is stopping, a submission cut short (or failing meanwhile) adds no reason.
        yield { kind: 'unsent', positions: unsent(), error: stop.aborted ? undefined : error };
        return;
      }
      if (part.texts.length === 1) {
        outcome = { kind: 'refused', position: part.positions[0]!, errors: refusal(error) };
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
