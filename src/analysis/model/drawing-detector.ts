import type { DetectedObject } from '../scene-types.ts';
import { FURNITURE_LABELS } from './coco-labels.ts';
import type { ImageStatistics } from './image-statistics.ts';

/**
 * Rule-based check for pictures that are not photographs. The network was trained on photos and
 * calls a floor plan "exterior" with high confidence, and the training set holds no plans, so
 * drawings are recognised from pixel statistics instead: a drawing is mostly a handful of flat colours
 * (paper, fills) crossed by lines. Thresholds were set from photo statistics (6,760 training photos: the
 * 8 most common colours cover at most ~0.6 of a photo) and procedurally drawn plans, not the dev plans.
 */
export const DRAWING_THRESHOLDS = {
  /** Share of pixels in the 8 most common 4-bit colours: photos ≤ ~0.6, drawings ≥ ~0.8. */
  fewColours: [0.6, 0.78],
  /** Mean luminance of light paper (most plans) … */
  lightPaper: [0.6, 0.8],
  /** … or of a dark screen (white-on-black plans). */
  darkPaper: [0.25, 0.1],
  /** Share of edge pixels a drawing needs to have lines at all (a blank page has none). */
  lines: [0.004, 0.012],
  /** A furniture detection covering this much of a drawing makes it a product cut-out, not a plan. */
  productArea: 0.15,
  productScore: 0.5,
} as const;

/** Hermite step from 0 at `edge0` to 1 at `edge1` (either order). */
function smoothstep(edge0: number, edge1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}

/** Probabilities that the picture is a floor plan, or a drawing/cut-out that is no room at all. */
export function drawingProbabilities(
  stats: ImageStatistics,
  detections: readonly DetectedObject[],
): { floorPlan: number; other: number } {
  const t = DRAWING_THRESHOLDS;
  const fewColours = smoothstep(t.fewColours[0], t.fewColours[1], stats.topColoursCoverage);
  const paper = Math.max(
    smoothstep(t.lightPaper[0], t.lightPaper[1], stats.meanLuminance),
    smoothstep(t.darkPaper[0], t.darkPaper[1], stats.meanLuminance),
  );
  const drawing = fewColours * paper;
  const lines = smoothstep(t.lines[0], t.lines[1], stats.edgeFraction);
  const product = detections.some(
    (d) =>
      FURNITURE_LABELS.has(d.label) &&
      d.score >= t.productScore &&
      d.box.width * d.box.height >= t.productArea,
  );
  const floorPlan = product ? 0 : drawing * lines;
  return { floorPlan, other: drawing - floorPlan };
}
