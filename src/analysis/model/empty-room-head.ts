import {
  decodeLinearHead,
  headLogits,
  softmax,
  type DecodedLinearHead,
  type LinearHeadFile,
} from './linear-head.ts';

/**
 * The second opinion for empty rooms, stored in the head file under `emptyRooms`: a multinomial
 * logistic regression on the same features as the main head, fitted on training photos with their
 * furniture masked out (scripts/fit-empty-rooms.ts), so it learned rooms from walls, floors, windows
 * and fixtures rather than from furniture.
 */
export interface EmptyRoomHeadFile extends LinearHeadFile {
  /** Interior room types only (a subset of the main head's labels). */
  labels: string[];
  /** Temperature of the combined opinion (see emptyRoomProbabilities), fitted out of fold. */
  temperature: number;
  /** An empty room's type is given from this combined probability on (and a fixture, where it has some). */
  answerAbove: number;
  /**
   * Per room, the probability from which an empty room is given that type, in place of `answerAbove`:
   * each fitted on that room's own out-of-fold answers, so rooms that are easy to name (a bathroom with
   * its toilet seen) do not lend their precision to rooms that are not. 1: never named when empty.
   */
  answerAboveByRoom?: Record<string, number>;
}

/** An empty-room head ready to apply. */
export interface EmptyRoomHead extends DecodedLinearHead {
  /** Index of each label among the main head's labels. */
  mainIndex: number[];
  answerAbove: number;
  /** Threshold of each label: its own where the file has one, else `answerAbove`. */
  answerAboveByRoom: Record<string, number>;
}

/** Validates and unpacks the `emptyRooms` part of a head file against the main head's labels and size. */
export function parseEmptyRoomHead(
  file: EmptyRoomHeadFile,
  mainLabels: readonly string[],
  dimensions: number,
): EmptyRoomHead {
  const head = decodeLinearHead(file, dimensions);
  const mainIndex = file.labels.map((label) => mainLabels.indexOf(label));
  const byRoom: unknown = file.answerAboveByRoom ?? {};
  const isProbability = (v: unknown): v is number => typeof v === 'number' && v >= 0 && v <= 1;
  const ok =
    head !== null &&
    file.labels.length >= 2 &&
    mainIndex.every((k) => k >= 0) &&
    isProbability(file.answerAbove) &&
    typeof byRoom === 'object' &&
    byRoom !== null &&
    !Array.isArray(byRoom) &&
    Object.entries(byRoom).every(([label, v]) => file.labels.includes(label) && isProbability(v));
  if (!ok) throw new Error('the empty-room part of the room classifier file is malformed');
  const answerAboveByRoom = Object.fromEntries(
    file.labels.map((label) => [label, (byRoom as Record<string, number>)[label] ?? file.answerAbove]),
  );
  return { ...head, mainIndex, answerAbove: file.answerAbove, answerAboveByRoom };
}

/** Log-softmax of logits. */
function logSoftmax(logits: readonly number[]): number[] {
  return softmax(logits).map((p) => Math.log(Math.max(p, 1e-300)));
}

/**
 * Logits of the combined opinion on an empty room: the mean of the two heads' log-probabilities over
 * the empty head's labels (a product of experts), so a room is likely only where both agree. `x` is
 * the power-normalised feature vector, `mainLogits` the main head's raw logits for it.
 */
export function combinedEmptyRoomLogits(
  empty: EmptyRoomHead,
  x: Float64Array,
  mainLogits: readonly number[],
): number[] {
  const own = logSoftmax(headLogits(empty, x));
  const main = logSoftmax(empty.mainIndex.map((k) => mainLogits[k]!));
  return own.map((v, k) => (v + main[k]!) / 2);
}

/** Calibrated probabilities of an empty room's type, keyed by label. */
export function emptyRoomProbabilities(
  empty: EmptyRoomHead,
  x: Float64Array,
  mainLogits: readonly number[],
): Record<string, number> {
  const probs = softmax(combinedEmptyRoomLogits(empty, x, mainLogits), empty.temperature);
  return Object.fromEntries(empty.labels.map((label, k) => [label, probs[k]!]));
}
