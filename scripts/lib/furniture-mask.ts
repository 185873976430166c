import { ROOM_FIXTURE_LABELS } from '../../src/analysis/model/furnishing.ts';
import type { DetectedObject, RawImage } from '../../src/analysis/scene-types.ts';

/** Boxes are grown by this fraction of their size on each side, so edges and shadows go too. */
const MARGIN = 0.06;

/**
 * A copy of the image with every detected object that is not part of the room (furniture, people,
 * things on tables: all but the fixtures a room is built with) painted over: each box is filled with a
 * vertical blend from the colour just above it to the colour just below it, the wall and the floor it
 * stood between. What is left is what an empty room shows: walls, floor, windows, doors, fixtures.
 * It stands in for the photos of emptied rooms the training data lacks.
 */
export function maskFurniture(image: RawImage, detections: readonly DetectedObject[]): RawImage {
  const { width, height } = image;
  const data = Uint8Array.from(image.data);
  for (const d of detections) {
    if (ROOM_FIXTURE_LABELS.has(d.label)) continue;
    const x0 = clampIndex((d.box.x - MARGIN * d.box.width) * width, width);
    const x1 = clampIndex((d.box.x + (1 + MARGIN) * d.box.width) * width, width);
    const y0 = clampIndex((d.box.y - MARGIN * d.box.height) * height, height);
    const y1 = clampIndex((d.box.y + (1 + MARGIN) * d.box.height) * height, height);
    if (x1 <= x0 || y1 <= y0) continue;
    // Rows just outside the box (or its own edge rows at the image border), read before painting.
    const above = meanColour(data, width, x0, x1, Math.max(0, y0 - 1));
    const below = meanColour(data, width, x0, x1, Math.min(height - 1, y1 + 1));
    for (let y = y0; y <= y1; y++) {
      const t = y1 === y0 ? 0 : (y - y0) / (y1 - y0);
      for (let x = x0; x <= x1; x++) {
        const p = (y * width + x) * 3;
        for (let c = 0; c < 3; c++) data[p + c] = Math.round(above[c]! * (1 - t) + below[c]! * t);
      }
    }
  }
  return { ...image, data };
}

function clampIndex(value: number, size: number): number {
  return Math.min(size - 1, Math.max(0, Math.round(value)));
}

function meanColour(data: Uint8Array, width: number, x0: number, x1: number, y: number): number[] {
  const sum = [0, 0, 0];
  for (let x = x0; x <= x1; x++) {
    const p = (y * width + x) * 3;
    for (let c = 0; c < 3; c++) sum[c]! += data[p + c]!;
  }
  return sum.map((s) => s / (x1 - x0 + 1));
}
