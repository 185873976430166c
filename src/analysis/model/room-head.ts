import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { INPUT_SIZE_RULE, isValidInputSize, NETWORK_INPUT_SIZE } from './network-input.ts';
import { decodeLinearHead, type DecodedLinearHead, type LinearHeadFile } from './linear-head.ts';
import { FEATURE_BLOCKS, type FeatureBlock, type FeatureBlocks } from './model-features.ts';

export { headLogits, softmax } from './linear-head.ts';

/** Where the committed head lives, next to this file. */
export const DEFAULT_HEAD_PATH = fileURLToPath(new URL('./room-classifier.json', import.meta.url));

/**
 * The fitted scene classifier: multinomial logistic regression on chosen feature blocks. Features
 * are signed-square-rooted then standardised (`(x - mean) / scale`), logits divided by the
 * calibration temperature before the softmax.
 */
export interface RoomHeadFile extends LinearHeadFile {
  version: 1;
  /** Class names (training labels after mapping, e.g. `entrance_hall`, `exterior`). */
  labels: string[];
  blocks: FeatureBlock[];
  /** Side of the square CenterNet ran at when the features were extracted (absent: 512). */
  inputSize?: number;
  /** Number of concatenated features. */
  dimensions: number;
  /** Below this calibrated top probability the room type is reported as `unknown`. */
  unknownBelow: number;
  /** Data sources, counts, date, seed and accuracies of the fit. */
  provenance: Record<string, unknown>;
}

/** A head ready to apply: the file's numbers as typed arrays. */
export interface RoomHead extends DecodedLinearHead {
  blocks: FeatureBlock[];
  /** The network must run at the side the head was fitted on: features change with it. */
  inputSize: number;
  unknownBelow: number;
}

/** Validates and unpacks a head file. */
export function parseRoomHead(file: RoomHeadFile): RoomHead {
  const dims = file.dimensions;
  const head = decodeLinearHead(file, dims);
  const inputSize = file.inputSize ?? NETWORK_INPUT_SIZE;
  if (!isValidInputSize(inputSize))
    throw new Error(`the room classifier's inputSize must be ${INPUT_SIZE_RULE}, not ${inputSize}`);
  const ok =
    head !== null &&
    file.version === 1 &&
    file.blocks.every((b) => (FEATURE_BLOCKS as readonly string[]).includes(b)) &&
    file.unknownBelow >= 0 &&
    file.unknownBelow <= 1;
  if (!ok) throw new Error('the room classifier file is malformed');
  return {
    ...head,
    blocks: file.blocks,
    inputSize,
    unknownBelow: file.unknownBelow,
  };
}

/** Reads a head file from disk. */
export async function loadRoomHead(path: string = DEFAULT_HEAD_PATH): Promise<RoomHead> {
  return parseRoomHead(JSON.parse(await readFile(path, 'utf8')) as RoomHeadFile);
}

/** Signed square root: tames the heavy tails of pooled activations and detector scores. */
export function powerNormalise(value: number): number {
  return Math.sign(value) * Math.sqrt(Math.abs(value));
}

/** Concatenates the chosen blocks, power-normalised (not yet standardised). */
export function featureVector(blocks: FeatureBlocks, chosen: readonly FeatureBlock[]) {
  const parts = chosen.map((b) => {
    const part = blocks[b];
    if (!part) throw new Error(`the feature block ${b} was not extracted`);
    return part;
  });
  const out = new Float64Array(parts.reduce((n, part) => n + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    for (const v of part) out[offset++] = powerNormalise(v);
  }
  return out;
}
