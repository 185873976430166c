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
export function isConsistentHead(
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
