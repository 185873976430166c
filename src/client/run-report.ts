import { describePositions } from './position-ranges.ts';

/** An accepted batch whose outcome could not be read: the service may have stored its items or not. */
export interface UnknownOutcome {
  batchId: string;
  positions: readonly number[];
}

/** What a run that stopped before the end left undone, and why. */
export interface Undone {
  /** Every distinct error that stopped the run, in the order they happened. */
  reasons: readonly string[];
  unknown: readonly UnknownOutcome[];
  /** Positions of items cut into batches that were never submitted, in any order. */
  unsubmitted: readonly number[];
  /** The first position no batch holds yet, or undefined when the whole file was cut into batches. */
  unbatchedFrom: number | undefined;
  /** Whether any batch was accepted. */
  submittedAny: boolean;
}

/**
 * The message of a run that stopped: its reasons, one line per accepted batch whose outcome is
 * unknown, and the positions not submitted, so that the user can tell exactly what to send again.
 */
export function describeUndone(undone: Undone): string {
  const lines = [...undone.reasons];
  for (const { batchId, positions } of undone.unknown) {
    lines.push(`Accepted, outcome unknown: batch ${batchId} (positions ${describePositions(positions)}).`);
  }
  const unsubmitted = [...undone.unsubmitted].sort((a, b) => a - b);
  const parts = unsubmitted.length > 0 ? [`positions ${describePositions(unsubmitted)}`] : [];
  if (undone.unbatchedFrom !== undefined) parts.push(`every item from position ${undone.unbatchedFrom} on`);
  if (parts.length > 0) {
    lines.push(undone.submittedAny ? `Not submitted: ${parts.join(' and ')}.` : 'No item was submitted.');
  }
  return lines.join('\n');
}
