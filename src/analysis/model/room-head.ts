import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { INPUT_SIZE_RULE, isValidInputSize, NETWORK_INPUT_SIZE } from './network-input.ts';
import { decodeFloat16 } from './float16-codec.ts';
import {
  FEATURE_BLOCKS,
  type FeatureBlock,
  type FeatureBlocks,
  type ModelFeatures,
} from './model-features.ts';

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
    mean.length === dims &&
    scale.length === dims &&
    scale.every((s) => s > 0) &&
    weights.length === file.labels.length &&
    file.bias.length === file.labels.length &&
    weights.every((row) => row.length === dims) &&
    // A fit that diverged (or a weight beyond float16's range) would answer NaN for every photo.
    [mean, scale, ...weights, file.bias].every((numbers) => numbers.every(Number.isFinite)) &&
    Number.isFinite(file.temperature) &&
    file.temperature > 0 &&
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

/** Raw logits of the head for a power-normalised, unstandardised feature vector. */
export function headLogits(head: Pick<RoomHead, 'mean' | 'scale' | 'weights' | 'bias'>, x: Float64Array) {
  const z = new Float64Array(x.length);
  for (let j = 0; j < x.length; j++) z[j] = (x[j]! - head.mean[j]!) / head.scale[j]!;
  return head.weights.map((row, k) => {
    let s = head.bias[k]!;
    for (let j = 0; j < z.length; j++) s += row[j]! * z[j]!;
    return s;
  });
}

/** Numerically stable softmax of logits divided by a temperature. */
export function softmax(logits: readonly number[], temperature = 1): number[] {
  const max = Math.max(...logits);
  const exps = logits.map((l) => Math.exp((l - max) / temperature));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

/** Calibrated class probabilities of one image, keyed by label. */
export function classifyRoom(
  head: RoomHead,
  features: Pick<ModelFeatures, 'blocks'>,
): Record<string, number> {
  const probs = softmax(headLogits(head, featureVector(features.blocks, head.blocks)), head.temperature);
  return Object.fromEntries(head.labels.map((label, k) => [label, probs[k]!]));
}
