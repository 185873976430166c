import * as tf from '@tensorflow/tfjs';

import { initWasmBackend } from '../../src/analysis/model/centernet-model.ts';
import { softmax } from '../../src/analysis/model/room-head.ts';

/** A design matrix: `rows` samples of `cols` standardised features, row-major. */
export interface Matrix {
  data: Float32Array;
  rows: number;
  cols: number;
}

/** Fitted multinomial logistic regression: `weights[k][j]`, `bias[k]`. */
export interface SoftmaxModel {
  weights: number[][];
  bias: number[];
}

/** Hyper-parameters of the fit. */
export interface FitOptions {
  classes: number;
  /** L2 penalty on the weights (per sample, i.e. added to the mean loss as l2/2·‖W‖²). */
  l2: number;
  epochs: number;
  learningRate: number;
}

/**
 * Full-batch multinomial logistic regression with Adam on the wasm backend. Weights start at zero
 * and every step sees all samples, so the fit is deterministic: the seed only chooses the splits.
 */
export async function fitSoftmaxRegression(
  x: Matrix,
  labels: Int32Array,
  sampleWeights: Float32Array,
  options: FitOptions,
): Promise<SoftmaxModel> {
  await initWasmBackend();
  const xs = tf.tensor2d(x.data, [x.rows, x.cols]);
  const ys = tf.oneHot(tf.tensor1d(labels, 'int32'), options.classes).toFloat();
  const sw = tf.tensor1d(sampleWeights);
  const w = tf.variable(tf.zeros([x.cols, options.classes]));
  const b = tf.variable(tf.zeros([options.classes]));
  const optimizer = tf.train.adam(options.learningRate);
  const totalWeight = sampleWeights.reduce((a, v) => a + v, 0);
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    optimizer.minimize(() => {
      const logits = xs.matMul(w).add(b);
      const nll = tf.losses.softmaxCrossEntropy(ys, logits, sw, 0, tf.Reduction.SUM).div(totalWeight);
      const penalty = w
        .square()
        .sum()
        .mul(options.l2 / 2);
      return tf.add<tf.Scalar>(nll, penalty);
    });
  }
  const weights = (w.transpose().arraySync() as number[][]).map((row) => row.map(Number));
  const bias = Array.from(b.dataSync());
  tf.dispose([xs, ys, sw, w, b]);
  optimizer.dispose();
  return { weights, bias };
}

/** Logits of every row of `x`. */
export function predictLogits(model: SoftmaxModel, x: Matrix): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < x.rows; i++) {
    const offset = i * x.cols;
    out.push(
      model.weights.map((row, k) => {
        let s = model.bias[k]!;
        for (let j = 0; j < x.cols; j++) s += row[j]! * x.data[offset + j]!;
        return s;
      }),
    );
  }
  return out;
}

/** Mean negative log-likelihood of the true labels at a temperature. */
export function negativeLogLikelihood(logits: number[][], labels: Int32Array, temperature: number): number {
  let sum = 0;
  logits.forEach((l, i) => {
    sum -= Math.log(Math.max(1e-12, softmax(l, temperature)[labels[i]!]!));
  });
  return sum / logits.length;
}

/** Temperature minimising held-out NLL (golden-section search on log T in [-2, 3]). */
export function fitTemperature(logits: number[][], labels: Int32Array): number {
  let lo = -2;
  let hi = 3;
  const phi = (Math.sqrt(5) - 1) / 2;
  for (let i = 0; i < 60; i++) {
    const a = hi - phi * (hi - lo);
    const c = lo + phi * (hi - lo);
    if (
      negativeLogLikelihood(logits, labels, Math.exp(a)) < negativeLogLikelihood(logits, labels, Math.exp(c))
    )
      hi = c;
    else lo = a;
  }
  return Math.exp((lo + hi) / 2);
}
