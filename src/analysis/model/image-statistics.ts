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

/**
 * Measures an image in one pass plus a neighbour pass; about 5 ms for 512×384. The loops run on
 * every pixel of every analyzed image, so they walk rows and columns with plain arithmetic and
 * allocate nothing.
 */
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
  for (let row = 0, i = 0, p = 0; row < height; row++) {
    const inSkyRows = row < skyRows;
    const band = row < third ? 1 : row >= height - third ? -1 : 0;
    for (let col = 0; col < width; col++, i++, p += 3) {
      const r = data[p]!;
      const g = data[p + 1]!;
      const b = data[p + 2]!;
      const max = r > g ? (r > b ? r : b) : g > b ? g : b;
      const min = r < g ? (r < b ? r : b) : g < b ? g : b;
      const sat = max === 0 ? 0 : (max - min) / max;
      const y = (0.299 * r + 0.587 * g + 0.114 * b) / 255;
      lum[i] = y;
      lumSum += y;
      satSum += sat;
      histogram[((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4)]! += 1;
      if (sat < 0.15) lowSat++;
      if (y > 0.9 && sat < 0.1) white++;
      if (g > r && g > b && sat > 0.25 && y > 0.12) green++;
      if (inSkyRows && y > 0.45 && (b >= r || sat < 0.12)) sky++;
      if (band === 1) topLum += y;
      else if (band === -1) bottomLum += y;
    }
  }
  const sorted = Array.from(histogram).sort((a, b) => b - a);
  let covered = 0;
  let palette = 0;
  while (palette < sorted.length && covered < 0.95 * n) covered += sorted[palette++]!;
  const top8 = sorted.slice(0, 8).reduce((s, v) => s + v, 0);

  let flat = 0;
  let edges = 0;
  let thinDark = 0;
  const stride = width * 3;
  for (let row = 0; row < height - 1; row++) {
    // Thin lines are looked for only where both neighbours 2 px away exist.
    const linesRow = row >= 2 && row < height - 2;
    for (let col = 0, i = row * width, p = i * 3; col < width - 1; col++, i++, p += 3) {
      // Flat: no channel differs by more than 2 levels from the right or the lower neighbour.
      if (
        Math.abs(data[p]! - data[p + 3]!) <= 2 &&
        Math.abs(data[p + 1]! - data[p + 4]!) <= 2 &&
        Math.abs(data[p + 2]! - data[p + 5]!) <= 2 &&
        Math.abs(data[p]! - data[p + stride]!) <= 2 &&
        Math.abs(data[p + 1]! - data[p + stride + 1]!) <= 2 &&
        Math.abs(data[p + 2]! - data[p + stride + 2]!) <= 2
      ) {
        flat++;
      }
      const y = lum[i]!;
      if (Math.abs(y - lum[i + 1]!) > 0.2 || Math.abs(y - lum[i + width]!) > 0.2) edges++;
      if (y < 0.4 && linesRow && col >= 2 && col < width - 2) {
        const acrossLight = lum[i - 2]! > 0.7 && lum[i + 2]! > 0.7;
        if (acrossLight || (lum[i - 2 * width]! > 0.7 && lum[i + 2 * width]! > 0.7)) thinDark++;
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
