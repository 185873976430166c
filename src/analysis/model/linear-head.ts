import { decodeFloat16 } from './float16-codec.ts';

/** The arithmetic of a linear softmax head, shared by the room head and the empty-room head. */

/** Weights of a linear head over standardised features. */
export interface LinearHead {
  mean: Float64Array;
  scale: Float64Array;
  weights: Float64Array[];
  bias: Float64Array;
}

/** Raw logits of the head for a power-normalised, unstandardised feature vector. */
export function headLogits(head: LinearHead, x: Float64Array): number[] {
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

/**
 * Whether decoded head numbers fit together: `classes` rows of `dimensions` weights, a positive scale,
 * everything finite (a fit that diverged, or a weight beyond float16's range, would answer NaN for
 * every photo), and a positive temperature.
 */
function isConsistentHead(
  head: LinearHead & { temperature: number },
  classes: number,
  dimensions: number,
): boolean {
  const { mean, scale, weights, bias, temperature } = head;
  return (
    mean.length === dimensions &&
    scale.length === dimensions &&
    scale.every((s) => s > 0) &&
    weights.length === classes &&
    bias.length === classes &&
    weights.every((row) => row.length === dimensions) &&
    [mean, scale, ...weights, bias].every((numbers) => numbers.every(Number.isFinite)) &&
    Number.isFinite(temperature) &&
    temperature > 0
  );
}

/** A linear head as its file stores it: the numbers as float16, base64 (see float16-codec.ts). */
export interface LinearHeadFile {
  /** Class names, one per row of weights. */
  labels: string[];
  /** Feature normalisation, one entry per feature. */
  mean: string;
  scale: string;
  /** One row of feature weights per label. */
  weights: string[];
  bias: number[];
  /** Divides the logits before the softmax; fitted on a calibration split. */
  temperature: number;
}

/** A linear head decoded from its file, with its labels and temperature. */
export interface DecodedLinearHead extends LinearHead {
  labels: string[];
  temperature: number;
}

/**
 * Decodes a head file's numbers, or null when they do not fit together for `dimensions` features
 * (see isConsistentHead): the caller names the file in its error.
 */
export function decodeLinearHead(file: LinearHeadFile, dimensions: number): DecodedLinearHead | null {
  const head = {
    labels: file.labels,
    mean: decodeFloat16(file.mean),
    scale: decodeFloat16(file.scale),
    weights: file.weights.map(decodeFloat16),
    bias: Float64Array.from(file.bias),
    temperature: file.temperature,
  };
  return isConsistentHead(head, file.labels.length, dimensions) ? head : null;
}
