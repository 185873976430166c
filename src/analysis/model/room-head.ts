import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { INPUT_SIZE_RULE, isValidInputSize, NETWORK_INPUT_SIZE } from './network-input.ts';
import { decodeFloat16 } from './float16-codec.ts';
import { parseEmptyRoomHead, type EmptyRoomHead, type EmptyRoomHeadFile } from './empty-room-head.ts';
import { isConsistentHead } from './linear-head.ts';
import { FEATURE_BLOCKS, type FeatureBlock, type FeatureBlocks } from './model-features.ts';

export { headLogits, softmax } from './linear-head.ts';

/** Where the committed head lives, next to this file. */
export const DEFAULT_HEAD_PATH = fileURLToPath(new URL('./room-classifier.json', import.meta.url));

/**
 * The fitted scene classifier: multinomial logistic regression on chosen feature blocks. Features
 * are signed-square-rooted then standardised (`(x - mean) / scale`), logits divided by the
 * calibration temperature before the softmax.
 */
export interface RoomHeadFile {
  version: 1;
  /** Class names (training labels after mapping, e.g. `entrance_hall`, `exterior`). */
  labels: string[];
  blocks: FeatureBlock[];
  /** Side of the square CenterNet ran at when the features were extracted (absent: 512). */
  inputSize?: number;
  /** Number of concatenated features. */
  dimensions: number;
  /** Feature normalisation, one entry per feature (float16, base64: see float16-codec.ts). */
  mean: string;
  scale: string;
  /** One row of feature weights per label (float16, base64). */
  weights: string[];
  bias: number[];
  /** Fitted on a calibration split held out from training. */
  temperature: number;
  /** Below this calibrated top probability the room type is reported as `unknown`. */
  unknownBelow: number;
  /** Second opinion for rooms without furnishing (scripts/fit-empty-rooms.ts); absent: none. */
  emptyRooms?: EmptyRoomHeadFile;
  /** Data sources, counts, date, seed and accuracies of the fit. */
  provenance: Record<string, unknown>;
}

/** A head ready to apply: the file's numbers as typed arrays. */
export interface RoomHead {
  labels: string[];
  blocks: FeatureBlock[];
  /** The network must run at the side the head was fitted on: features change with it. */
  inputSize: number;
  mean: Float64Array;
  scale: Float64Array;
  weights: Float64Array[];
  bias: Float64Array;
  temperature: number;
  unknownBelow: number;
  /** Head for empty rooms, or null when the file has none (empty rooms then use this head). */
  emptyRooms: EmptyRoomHead | null;
}

/** Validates and unpacks a head file. */
export function parseRoomHead(file: RoomHeadFile): RoomHead {
  const dims = file.dimensions;
  const mean = decodeFloat16(file.mean);
  const scale = decodeFloat16(file.scale);
  const weights = file.weights.map(decodeFloat16);
  const inputSize = file.inputSize ?? NETWORK_INPUT_SIZE;
  if (!isValidInputSize(inputSize))
    throw new Error(`the room classifier's inputSize must be ${INPUT_SIZE_RULE}, not ${inputSize}`);
  const ok =
    file.version === 1 &&
    file.blocks.every((b) => (FEATURE_BLOCKS as readonly string[]).includes(b)) &&
    isConsistentHead(
      { mean, scale, weights, bias: Float64Array.from(file.bias), temperature: file.temperature },
      file.labels.length,
      dims,
    ) &&
    file.unknownBelow >= 0 &&
    file.unknownBelow <= 1;
  if (!ok) throw new Error('the room classifier file is malformed');
  return {
    labels: file.labels,
    blocks: file.blocks,
    inputSize,
    mean,
    scale,
    weights,
    bias: Float64Array.from(file.bias),
    temperature: file.temperature,
    unknownBelow: file.unknownBelow,
    emptyRooms: file.emptyRooms ? parseEmptyRoomHead(file.emptyRooms, file.labels, dims) : null,
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
