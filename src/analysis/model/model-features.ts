import type { DetectedObject, RawImage } from '../scene-types.ts';
import type { CenterNetModel, PooledOutput } from './centernet-model.ts';
import { COCO_LABELS } from './coco-labels.ts';
import { type ImageStatistics, measureImage, statisticsVector } from './image-statistics.ts';

/** Named feature blocks a classifier head can pick from; the training cache stores all of them. */
export const FEATURE_BLOCKS = [
  'headMean',
  'headMax',
  'headGrid',
  'backboneMean',
  'backboneMax',
  'backboneStrips',
  'se10',
  'se11',
  'se12',
  'se13',
  'se14',
  'classMax',
  'stats',
] as const;

/** One named block of features. */
export type FeatureBlock = (typeof FEATURE_BLOCKS)[number];

/**
 * The blocks of one extraction: those asked for, and always the class peaks and the statistics,
 * which the verdict reads itself.
 */
export type FeatureBlocks = Partial<Record<FeatureBlock, Float32Array>> &
  Record<'classMax' | 'stats', Float32Array>;

/** Everything the network and the image statistics say about one picture. */
export interface ModelFeatures {
  blocks: FeatureBlocks;
  statistics: ImageStatistics;
  /** Detections after non-maximum suppression, score ≥ MIN_DETECTION_SCORE, best first. */
  detections: DetectedObject[];
  /**
   * Long side of the picture the network was given, in pixels, before it was scaled to the network's
   * input: below that input's side the network saw it enlarged.
   */
  pictureLongSide: number;
  inferenceMs: number;
}

/** Detector candidates below this score are noise on room photos. */
export const MIN_DETECTION_SCORE = 0.25;
const NMS_IOU = 0.5;

/**
 * Runs the network and the image statistics on one decoded image. Only the blocks asked for are
 * pooled (a classifier head needs a few; training caches all of them).
 */
export function extractFeatures(
  model: CenterNetModel,
  image: RawImage,
  blocks: readonly FeatureBlock[] = FEATURE_BLOCKS,
): ModelFeatures {
  const started = performance.now();
  const pooled = new Set<PooledOutput>(['classMax']);
  for (const block of blocks) if (block !== 'stats') pooled.add(block);
  const { detections, ...outputs } = model.run(image, [...pooled]);
  const statistics = measureImage(image);
  return {
    blocks: { ...outputs, classMax: outputs.classMax, stats: statisticsVector(statistics) },
    statistics,
    detections: parseDetections(detections, model.inputSize),
    pictureLongSide: Math.max(image.width, image.height),
    inferenceMs: performance.now() - started,
  };
}

/** Intersection over union of two boxes (fractions of the image). */
export function iou(a: DetectedObject['box'], b: DetectedObject['box']): number {
  const x = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x));
  const y = Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
  const inter = x * y;
  return inter / (a.width * a.height + b.width * b.height - inter || 1);
}

/**
 * Turns the 100×6 candidate rows (pixels of the `inputSize` square) into labelled boxes (fractions of
 * the image), with per-class NMS.
 */
export function parseDetections(rows: Float32Array, inputSize: number): DetectedObject[] {
  const candidates: DetectedObject[] = [];
  for (let r = 0; r + 5 < rows.length; r += 6) {
    const score = rows[r + 4]!;
    const label = COCO_LABELS[Math.round(rows[r + 5]!)];
    if (!(score >= MIN_DETECTION_SCORE) || label === undefined) continue;
    const clamp = (v: number): number => Math.min(1, Math.max(0, v / inputSize));
    const x1 = clamp(rows[r]!);
    const y1 = clamp(rows[r + 1]!);
    const box = { x: x1, y: y1, width: clamp(rows[r + 2]!) - x1, height: clamp(rows[r + 3]!) - y1 };
    if (box.width <= 0 || box.height <= 0) continue;
    candidates.push({ label, score: Math.round(score * 1000) / 1000, box });
  }
  candidates.sort((a, b) => b.score - a.score);
  const kept: DetectedObject[] = [];
  for (const c of candidates) {
    if (!kept.some((k) => k.label === c.label && iou(k.box, c.box) > NMS_IOU)) kept.push(c);
  }
  return kept;
}
