import type { RawImage } from '../scene-types.ts';

/**
 * Cheap whole-image measurements that the network's features do not capture well: drawings
 * (floor plans) are flat areas of few colours on white with thin dark lines; exteriors have sky on top
 * and vegetation. All values are fractions or normalised to 0..1.
 */
export interface ImageStatistics {
  /** Pixels whose right and lower neighbours differ by ≤ 2 levels in every channel (flat fills). */
  flatFraction: number;
  /** Near-white, unsaturated pixels (paper background). */
  whiteFraction: number;
  /** Share of pixels covered by the 8 most common colours (4 bits per channel). */
  topColoursCoverage: number;
  /** Number of 4-bit colours needed to cover 95% of pixels, divided by 4096. */
  paletteSize: number;
  meanSaturation: number;
  lowSaturationFraction: number;
  /** Dark pixels with a light pixel within 2 px on both sides horizontally or vertically (thin lines). */
  thinDarkFraction: number;
  /** Pixels with a strong luminance step to a neighbour. */
  edgeFraction: number;
  /** Bright bluish or white-grey pixels in the top quarter (sky). */
  skyTopFraction: number;
  /** Green, saturated pixels (lawn, trees). */
  greenFraction: number;
  /** Mean luminance of the top third minus the bottom third, 0..1 scale (can be negative). */
  topBottomContrast: number;
  meanLuminance: number;
}

/** Field order used when the statistics enter the classifier as a feature block. */
export const STATISTIC_NAMES = [
  'flatFraction',
  'whiteFraction',
  'topColoursCoverage',
  'paletteSize',
  'meanSaturation',
  'lowSaturationFraction',
  'thinDarkFraction',
  'edgeFraction',
  'skyTopFraction',
  'greenFraction',
  'topBottomContrast',
  'meanLuminance',
] as const satisfies readonly (keyof ImageStatistics)[];

/** Measures an image in one pass plus a neighbour pass; ~5 ms for 512×384. */
export function measureImage(image: RawImage): ImageStatistics {
  const { data, width, height } = image;
  const n = width * height;
  const lum = new Float32Array(n);
  const histogram = new Uint32Array(4096);
  let white = 0;
  let satSum = 0;
  let lowSat = 0;
  let sky = 0;
  let green = 0;
  let topLum = 0;
  let bottomLum = 0;
  let lumSum = 0;
  const third = Math.max(1, Math.floor(height / 3));
  const skyRows = Math.max(1, Math.floor(height / 4));
  for (let i = 0, p = 0; i < n; i++, p += 3) {
    const r = data[p]!;
    const g = data[p + 1]!;
    const b = data[p + 2]!;
    const max = Math.max(r, g, b);
    const min = Math.min(r, g, b);
    const sat = max === 0 ? 0 : (max - min) / max;
    const y = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
    lum[i] = y;
    lumSum += y;
    satSum += sat;
    histogram[((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4)]! += 1;
    if (sat < 0.15) lowSat++;
    if (y > 0.9 && sat < 0.1) white++;
    if (g > r && g > b && sat > 0.25 && y > 0.12) green++;
    const row = Math.floor(i / width);
    if (row < skyRows && y > 0.45 && (b >= r || sat < 0.12)) sky++;
    if (row < third) topLum += y;
    else if (row >= height - third) bottomLum += y;
  }
  const sorted = Array.from(histogram).sort((a, b) => b - a);
  let covered = 0;
  let palette = 0;
  while (palette < sorted.length && covered < 0.95 * n) covered += sorted[palette++]!;
  const top8 = sorted.slice(0, 8).reduce((s, v) => s + v, 0);

  let flat = 0;
  let edges = 0;
  let thinDark = 0;
  for (let row = 0; row < height - 1; row++) {
    for (let col = 0; col < width - 1; col++) {
      const i = row * width + col;
      const p = i * 3;
      const q = p + 3;
      const d = p + width * 3;
      let diff = 0;
      for (let c = 0; c < 3; c++) {
        diff = Math.max(diff, Math.abs(data[p + c]! - data[q + c]!), Math.abs(data[p + c]! - data[d + c]!));
      }
      if (diff <= 2) flat++;
      const y = lum[i]!;
      if (Math.abs(y - lum[i + 1]!) > 0.2 || Math.abs(y - lum[i + width]!) > 0.2) edges++;
      if (y < 0.4 && row >= 2 && col >= 2 && row < height - 2 && col < width - 2) {
        const light = (j: number): boolean => lum[j]! > 0.7;
        if ((light(i - 2) && light(i + 2)) || (light(i - 2 * width) && light(i + 2 * width))) thinDark++;
      }
    }
  }
  const inner = Math.max(1, (width - 1) * (height - 1));
  return {
    flatFraction: flat / inner,
    whiteFraction: white / n,
    topColoursCoverage: top8 / n,
    paletteSize: palette / 4096,
    meanSaturation: satSum / n,
    lowSaturationFraction: lowSat / n,
    thinDarkFraction: thinDark / inner,
    edgeFraction: edges / inner,
    skyTopFraction: sky / (skyRows * width),
    greenFraction: green / n,
    topBottomContrast: topLum / (third * width) - bottomLum / (third * width),
    meanLuminance: lumSum / n,
  };
}

/** The statistics as a vector in STATISTIC_NAMES order. */
export function statisticsVector(stats: ImageStatistics): Float32Array {
  return Float32Array.from(STATISTIC_NAMES.map((name) => stats[name]));
}

/** Inverse of statisticsVector (for cached features). */
export function statisticsFromVector(vector: Float32Array): ImageStatistics {
  const entries = STATISTIC_NAMES.map((name, j) => [name, vector[j] ?? 0] as const);
  return Object.fromEntries(entries) as Record<(typeof STATISTIC_NAMES)[number], number>;
}
