/**
 * The sides the CenterNet graph can run at, in a module of its own so that code reading a head file
 * (the API thread among it) does not load TensorFlow.
 */

/** Side of the square input the CenterNet graph was converted with (and trained at). */
export const NETWORK_INPUT_SIZE = 512;

const STRIDE = 32;
const MIN_INPUT_SIZE = 128;
const MAX_INPUT_SIZE = 768;

/** The rule, in words, for error messages. */
export const INPUT_SIZE_RULE = `a multiple of ${STRIDE} from ${MIN_INPUT_SIZE} to ${MAX_INPUT_SIZE}`;

/** Input sides a head may be fitted at: multiples of the graph's stride, within the rule's range. */
export function isValidInputSize(side: number): boolean {
  return Number.isInteger(side) && side % STRIDE === 0 && side >= MIN_INPUT_SIZE && side <= MAX_INPUT_SIZE;
}

/** Throws, naming the sides allowed, unless `side` is one the graph can run at. */
export function assertValidInputSize(side: number): void {
  if (!isValidInputSize(side))
    throw new Error(`the network input size must be ${INPUT_SIZE_RULE}, not ${side}`);
}
