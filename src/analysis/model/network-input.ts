/**
 * The sides the CenterNet graph can run at, in a module of its own so that code reading a head file
 * (the API thread among it) does not load TensorFlow.
 */

/** Side of the square input the CenterNet graph was converted with (and trained at). */
export const NETWORK_INPUT_SIZE = 512;

/** Input sides a head may be fitted at: multiples of the graph's stride (32), 128 to 768. */
export function isValidInputSize(side: number): boolean {
  return Number.isInteger(side) && side % 32 === 0 && side >= 128 && side <= 768;
}

/** Throws, naming the sides allowed, unless `side` is one the graph can run at. */
export function assertValidInputSize(side: number): void {
  if (!isValidInputSize(side))
    throw new Error(`the network input size must be a multiple of 32 from 128 to 768, not ${side}`);
}
