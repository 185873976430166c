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
}

/** An empty-room head ready to apply. */
export interface EmptyRoomHead extends DecodedLinearHead {
  /** Index of each label among the main head's labels. */
  mainIndex: number[];
  answerAbove: number;
}

/** Validates and unpacks the `emptyRooms` part of a head file against the main head's labels and size. */
export function parseEmptyRoomHead(
  file: EmptyRoomHeadFile,
  mainLabels: readonly string[],
  dimensions: number,
): EmptyRoomHead {
  const head = decodeLinearHead(file, dimensions);
  const mainIndex = file.labels.map((label) => mainLabels.indexOf(label));
  const ok =
    head !== null &&
    file.labels.length >= 2 &&
    mainIndex.every((k) => k >= 0) &&
    file.answerAbove >= 0 &&
    file.answerAbove <= 1;
  if (!ok) throw new Error('the empty-room part of the room classifier file is malformed');
  return { ...head, mainIndex, answerAbove: file.answerAbove };
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
