import { drawingProbabilities } from '../../src/analysis/model/drawing-detector.ts';
import { statisticsFromVector } from '../../src/analysis/model/image-statistics.ts';
import type { FeatureBlock } from '../../src/analysis/model/model-features.ts';
import { featureVector } from '../../src/analysis/model/room-head.ts';
import { ROOM_TYPES } from '../../src/analysis/scene-types.ts';
import type { CachedFeatures } from './feature-cache.ts';
import type { ManifestEntry } from './manifest.ts';
import {
  type Matrix,
  negativeLogLikelihood,
  predictLogits,
  type SoftmaxModel,
} from './softmax-regression.ts';

/** Dataset labels the contract names differently. */
const LABEL_ALIASES: Record<string, string> = { hallway: 'entrance_hall', living: 'living_room' };

/** Maps a manifest label to a contract room type (or `other`); throws on anything else. */
export function normaliseLabel(label: string): string {
  const mapped = LABEL_ALIASES[label] ?? label;
  if (mapped !== 'other' && !(ROOM_TYPES as readonly string[]).includes(mapped)) {
    throw new Error(`label "${label}" is not a contract room type (${ROOM_TYPES.join(', ')}, other)`);
  }
  return mapped;
}

/** Deterministic PRNG (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The entry indices of each (label, source) group, in the groups' sorted order, each shuffled with
 * one seeded sequence: the same seed deals the same photos to the same places.
 */
function shuffledGroups(entries: readonly ManifestEntry[], seed: number): number[][] {
  const random = seededRandom(seed);
  const groups = new Map<string, number[]>();
  entries.forEach((e, i) => {
    const key = `${e.label}|${e.source}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  return [...groups.keys()].sort().map((key) => {
    const idx = groups.get(key)!;
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [idx[i], idx[j]] = [idx[j]!, idx[i]!];
    }
    return idx;
  });
}

/** Holds out `fraction` of each (label, source) group for calibration, seeded. */
export function stratifiedSplit(entries: readonly ManifestEntry[], fraction: number, seed: number) {
  const fit: number[] = [];
  const calibration: number[] = [];
  for (const idx of shuffledGroups(entries, seed)) {
    // Never more than half a group: a small one (1 or 3 photos at 0.5) keeps most of it to fit on.
    const held = Math.min(Math.round(idx.length * fraction), Math.floor(idx.length / 2));
    calibration.push(...idx.slice(0, held));
    fit.push(...idx.slice(held));
  }
  return { fit: fit.sort((a, b) => a - b), calibration: calibration.sort((a, b) => a - b) };
}

/**
 * The fold (0 … folds − 1) of every entry: each (label, source) group is dealt out in turn, so every
 * fold holds the same share of every group, give or take one photo.
 */
export function stratifiedFolds(entries: readonly ManifestEntry[], folds: number, seed: number): Int32Array {
  const foldOf = new Int32Array(entries.length);
  let dealt = 0; // carries over between groups, so small groups do not all start in fold 0
  for (const idx of shuffledGroups(entries, seed)) for (const row of idx) foldOf[row] = dealt++ % folds;
  return foldOf;
}

/** Index of the largest value (the first of equals). */
export function argmax(values: readonly number[]): number {
  return values.indexOf(Math.max(...values));
}

/** Standardised rows of one split, their class indices and class-balancing weights. */
export interface SplitDesign {
  x: Matrix;
  y: Int32Array;
  weights: Float32Array;
  indices: number[];
}

/** Builds the fit and calibration matrices; normalisation comes from the fit split only. */
export function buildDesign(
  entries: readonly ManifestEntry[],
  features: readonly CachedFeatures[],
  blocks: readonly FeatureBlock[],
  labels: readonly string[],
  fit: number[],
  calibration: number[],
) {
  const vectors = features.map((f) => featureVector(f.blocks, blocks));
  const cols = vectors[0]!.length;
  const mean = new Array<number>(cols).fill(0);
  const scale = new Array<number>(cols).fill(0);
  for (const i of fit) vectors[i]!.forEach((v, j) => (mean[j]! += v / fit.length));
  for (const i of fit) vectors[i]!.forEach((v, j) => (scale[j]! += (v - mean[j]!) ** 2 / fit.length));
  // A floor on the scale keeps near-constant features (a detector class never seen) from turning
  // tiny differences into huge inputs, and keeps the scale representable in float16.
  for (let j = 0; j < cols; j++) scale[j] = Math.max(Math.sqrt(scale[j]!), 0.01);

  const counts = new Map<string, number>();
  for (const i of fit) counts.set(entries[i]!.label, (counts.get(entries[i]!.label) ?? 0) + 1);
  const split = (indices: number[]): SplitDesign => {
    const data = new Float32Array(indices.length * cols);
    indices.forEach((i, r) =>
      vectors[i]!.forEach((v, j) => (data[r * cols + j] = (v - mean[j]!) / scale[j]!)),
    );
    const y = Int32Array.from(indices, (i) => labels.indexOf(entries[i]!.label));
    // Balanced classes: every label weighs the same in the loss whatever its photo count.
    const weights = Float32Array.from(
      indices,
      (i) => fit.length / labels.length / (counts.get(entries[i]!.label) ?? 1),
    );
    return { x: { data, rows: indices.length, cols }, y, weights, indices };
  };
  return { mean, scale, fit: split(fit), calibration: split(calibration), entries, features };
}

type Design = ReturnType<typeof buildDesign>;

function accuracy(logits: number[][], y: Int32Array): number {
  let right = 0;
  logits.forEach((l, i) => (right += argmax(l) === y[i] ? 1 : 0));
  return logits.length ? right / logits.length : 0;
}

/** Accuracies, per-label recall on the calibration split, counts and drawing-detector false alarms. */
export function summariseFit(
  model: SoftmaxModel,
  design: Design,
  labels: readonly string[],
  temperature: number,
) {
  const fitLogits = predictLogits(model, design.fit.x);
  const calLogits = predictLogits(model, design.calibration.x);
  const counts: Record<string, number> = {};
  const sources: Record<string, number> = {};
  for (const e of design.entries) {
    counts[e.label] = (counts[e.label] ?? 0) + 1;
    sources[e.source || 'unspecified'] = (sources[e.source || 'unspecified'] ?? 0) + 1;
  }
  const recall = labels.map((label, k) => {
    const rows = calLogits.filter((_, i) => design.calibration.y[i] === k);
    const right = rows.filter((l) => argmax(l) === k).length;
    return `${label} ${rows.length ? ((100 * right) / rows.length).toFixed(1) : '-'}%`;
  });
  // How often the pixel-statistics rule would take a photo of a room for a drawing.
  let drawingFalsePositives = 0;
  let roomPhotos = 0;
  design.features.forEach((f, i) => {
    if (['floor_plan', 'other'].includes(design.entries[i]!.label)) return;
    roomPhotos++;
    const d = drawingProbabilities(statisticsFromVector(f.blocks.stats), f.detections);
    if (d.floorPlan + d.other >= 0.5) drawingFalsePositives++;
  });
  const fitAccuracy = accuracy(fitLogits, design.fit.y);
  // `--calibration 0` holds nothing out: there is no accuracy to report, rather than a 0 %.
  const calibration = calLogits.length
    ? {
        accuracy: accuracy(calLogits, design.calibration.y),
        nll: negativeLogLikelihood(calLogits, design.calibration.y, temperature),
      }
    : null;
  const report = [
    `fit: ${design.fit.x.rows} photos × ${design.fit.x.cols} features, accuracy ${(100 * fitAccuracy).toFixed(1)}%`,
    ...(calibration
      ? [
          `calibration: ${design.calibration.x.rows} photos, accuracy ${(100 * calibration.accuracy).toFixed(1)}%, ` +
            `temperature ${temperature.toFixed(3)}, NLL ${calibration.nll.toFixed(3)}`,
          `calibration recall: ${recall.join(', ')}`,
        ]
      : [`calibration: no photos held out, temperature ${temperature.toFixed(3)}`]),
    `room photos the drawing rule takes for drawings: ${drawingFalsePositives} of ${roomPhotos}`,
  ].join('\n');
  return { fitAccuracy, calibration, counts, sources, drawingFalsePositives, report };
}
