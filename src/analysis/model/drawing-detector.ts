import type { DetectedObject } from '../scene-types.ts';
import { FURNITURE_LABELS } from './coco-labels.ts';
import type { ImageStatistics } from './image-statistics.ts';

/**
 * Rule-based check for pictures that are not photographs, next to the classifier's own floor_plan
 * class (fitted on procedurally drawn plans). The network was trained on photos and alone calls a
 * real plan "exterior", so a plan on paper is also recognised from pixel statistics: mostly a few
 * flat colours, a large white background, bright overall, crossed by lines. The bounds keep the rule
 * silent on the 6,760 training photos (1 false alarm; bright bathrooms come closest). The dev set's
 * plans were only measured with them, though their statistics were seen when choosing the measures.
 */
export const DRAWING_THRESHOLDS = {
  /** Share of pixels in the 8 most common 4-bit colours (photos reach ~0.9, drawings ≥ 0.8). */
  fewColours: [0.75, 0.85],
  /** Near-white, unsaturated paper (photos rarely exceed 0.4; overexposed bathrooms do). */
  paper: [0.3, 0.42],
  /** Mean luminance of a drawing on paper. */
  bright: [0.75, 0.84],
  /** Share of edge pixels: a plan has walls and text, an overexposed wall has almost none. */
  lines: [0.012, 0.022],
  /** A blank page or a solid colour: almost all pixels flat, no edges. */
  blankFlat: [0.85, 0.95],
  blankEdges: 0.004,
  /** A furniture detection covering this much of a drawing makes it a product cut-out, not a plan. */
  productArea: 0.15,
  productScore: 0.5,
} as const;

/** Hermite step from 0 at `edge0` to 1 at `edge1`. */
function smoothstep(edge0: number, edge1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}

/** Probabilities that the picture is a floor plan on paper, or a blank page / cut-out (no room). */
export function drawingProbabilities(
  stats: ImageStatistics,
  detections: readonly DetectedObject[],
): { floorPlan: number; other: number } {
  const t = DRAWING_THRESHOLDS;
  const blank =
    stats.edgeFraction < t.blankEdges ? smoothstep(t.blankFlat[0], t.blankFlat[1], stats.flatFraction) : 0;
  const drawing =
    smoothstep(t.fewColours[0], t.fewColours[1], stats.topColoursCoverage) *
    smoothstep(t.paper[0], t.paper[1], stats.whiteFraction) *
    smoothstep(t.bright[0], t.bright[1], stats.meanLuminance);
  const lines = smoothstep(t.lines[0], t.lines[1], stats.edgeFraction);
  const product = detections.some(
    (d) =>
      FURNITURE_LABELS.has(d.label) &&
      d.score >= t.productScore &&
      d.box.width * d.box.height >= t.productArea,
  );
  const floorPlan = product ? 0 : drawing * lines * (1 - blank);
  return { floorPlan, other: Math.max(blank, drawing - floorPlan) };
}
