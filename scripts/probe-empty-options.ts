/**
 * THROWAWAY PROBE (not to land): measures the two options of #36 not yet tried, on the same rows and
 * folds as scripts/fit-empty-rooms.ts:
 *   - fixture/layout cues from image statistics (an oriented-edge layout descriptor, with a
 *     "both horizontal and vertical lines" cue per cell for tiles and cabinet fronts) added to the
 *     empty head's features;
 *   - a per-scene temperature: the main head alone, with a temperature of its own for empty rooms.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { decodeForModel } from '../src/analysis/model/decode-for-model.ts';
import { encodeFloat16 } from '../src/analysis/model/float16-codec.ts';
import { statisticsFromVector } from '../src/analysis/model/image-statistics.ts';
import { decodeLinearHead, type DecodedLinearHead } from '../src/analysis/model/linear-head.ts';
import type { FeatureBlock } from '../src/analysis/model/model-features.ts';
import {
  DEFAULT_HEAD_PATH,
  featureVector,
  headLogits,
  parseRoomHead,
  type RoomHeadFile,
  softmax,
} from '../src/analysis/model/room-head.ts';
import {
  applyFixtureEvidence,
  decideVerdict,
  EMPTY_FIXTURE_MIN_PEAK,
  EMPTY_ROOM_FIXTURES,
} from '../src/analysis/model/scene-verdict.ts';
import { COCO_LABELS } from '../src/analysis/model/coco-labels.ts';
import type { RawImage, RoomType } from '../src/analysis/scene-types.ts';
import { answerThresholdsByRoom, expectedCalibrationError, type NamedAnswer } from './lib/calibration.ts';
import { loadFeatures, type CachedFeatures } from './lib/feature-cache.ts';
import { maskFurniture } from './lib/furniture-mask.ts';
import { readManifest, type ManifestEntry } from './lib/manifest.ts';
import { fitSoftmaxRegression, fitTemperature } from './lib/softmax-regression.ts';
import { buildDesign, normaliseLabel, stratifiedFolds, stratifiedSplit } from './lib/training-data.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const data = path.resolve(repoRoot, '../shared/train');
const cacheDir = path.join(repoRoot, 'data/feature-cache');
const seed = 20240611;
const FOLDS = 5;
const NOT_ROOMS = new Set(['exterior', 'floor_plan', 'other']);

// ---------- the layout descriptor ----------
const SIDE = 128;
const CELLS = 4;
function gray(image: RawImage, side: number): Float32Array {
  const out = new Float32Array(side * side);
  const { data: px, width, height } = image;
  for (let y = 0; y < side; y++) {
    const y0 = Math.floor((y * height) / side);
    const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * height) / side));
    for (let x = 0; x < side; x++) {
      const x0 = Math.floor((x * width) / side);
      const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * width) / side));
      let s = 0;
      for (let yy = y0; yy < y1; yy++)
        for (let xx = x0; xx < x1; xx++) {
          const p = (yy * width + xx) * 3;
          s += 0.299 * px[p]! + 0.587 * px[p + 1]! + 0.114 * px[p + 2]!;
        }
      out[y * side + x] = s / ((y1 - y0) * (x1 - x0));
    }
  }
  return out;
}
/** Oriented gradient energy per cell (4 orientations), the mean magnitude, and min(H, V) per cell. */
function orientedEnergy(g: Float32Array, side: number) {
  const cell = side / CELLS;
  const energy = new Float64Array(CELLS * CELLS * 4);
  let total = 0;
  for (let y = 1; y < side - 1; y++)
    for (let x = 1; x < side - 1; x++) {
      const gx = g[y * side + x + 1]! - g[y * side + x - 1]!;
      const gy = g[(y + 1) * side + x]! - g[(y - 1) * side + x]!;
      const m = Math.hypot(gx, gy);
      if (m < 1) continue;
      let t = Math.atan2(gy, gx);
      if (t < 0) t += Math.PI;
      const f = (t / Math.PI) * 4; // 0..4, bin centres 0,1,2,3 (0°, 45°, 90°, 135°)
      const b0 = Math.floor(f) % 4;
      const b1 = (b0 + 1) % 4;
      const w1 = f - Math.floor(f);
      const c = Math.floor(y / cell) * CELLS + Math.floor(x / cell);
      energy[c * 4 + b0]! += m * (1 - w1);
      energy[c * 4 + b1]! += m * w1;
      total += m;
    }
  const shape = Array.from(energy, (e) => e / (total + 1e-6));
  // Tiles and cabinet fronts: lines both ways in one cell (orientation 0 = vertical edges, 2 = horizontal).
  const both = Array.from({ length: CELLS * CELLS }, (_, c) => Math.min(shape[c * 4]!, shape[c * 4 + 2]!));
  return { shape, both, mean: total / (side * side * 255) };
}
function layoutDescriptor(image: RawImage): Float32Array {
  const g = gray(image, SIDE);
  const half = new Float32Array((SIDE / 2) ** 2);
  for (let y = 0; y < SIDE / 2; y++)
    for (let x = 0; x < SIDE / 2; x++)
      half[y * (SIDE / 2) + x] =
        (g[2 * y * SIDE + 2 * x]! +
          g[2 * y * SIDE + 2 * x + 1]! +
          g[(2 * y + 1) * SIDE + 2 * x]! +
          g[(2 * y + 1) * SIDE + 2 * x + 1]!) /
        4;
  const fine = orientedEnergy(g, SIDE);
  const coarse = orientedEnergy(half, SIDE / 2);
  const cellLum = Array.from({ length: CELLS * CELLS }, (_, c) => {
    const cy = Math.floor(c / CELLS);
    const cx = c % CELLS;
    const cell = SIDE / CELLS;
    let s = 0;
    for (let y = cy * cell; y < (cy + 1) * cell; y++)
      for (let x = cx * cell; x < (cx + 1) * cell; x++) s += g[y * SIDE + x]!;
    return s / (cell * cell * 255);
  });
  return Float32Array.from([
    ...fine.shape,
    ...coarse.shape,
    fine.mean,
    coarse.mean,
    ...fine.both,
    ...cellLum,
  ]);
}

// ---------- rows, as fit-empty-rooms.ts deals them ----------
const headFile = JSON.parse(await readFile(DEFAULT_HEAD_PATH, 'utf8')) as RoomHeadFile;
const { emptyRooms: _shipped, ...mainFile } = headFile;
const main = parseRoomHead(mainFile);
const photos = (await readManifest(data)).map((e) => ({ ...e, label: normaliseLabel(e.label) }));
const plans: ManifestEntry[] = Array.from({ length: 600 }, (_, i) => ({
  file: `plan-${i}`,
  absolutePath: '',
  label: 'floor_plan',
  source: 'synthetic',
}));
const { fit, calibration } = stratifiedSplit([...photos, ...plans], 0.15, seed);
function perInteriorGroup(indices: readonly number[], n: number): ManifestEntry[] {
  const taken = new Map<string, number>();
  return indices
    .filter((i) => i < photos.length && !NOT_ROOMS.has(photos[i]!.label))
    .filter((i) => {
      const key = `${photos[i]!.label}|${photos[i]!.source}`;
      taken.set(key, (taken.get(key) ?? 0) + 1);
      return taken.get(key)! <= n;
    })
    .map((i) => photos[i]!);
}
const heldOut = perInteriorGroup(calibration, 50);
const fitOnly = perInteriorGroup(fit, 50);
const chosen = [...heldOut, ...fitOnly];
const opts = { cacheDir, inputSize: 512, threads: 2, log: () => {} };
const original = await loadFeatures(chosen, opts);
const masked = await loadFeatures(chosen, {
  ...opts,
  variant: {
    name: 'furniture-masked-v1',
    transform: (image, i) => maskFurniture(image, original[i]!.detections),
  },
});
const toModel = (f: CachedFeatures) => ({
  blocks: f.blocks,
  detections: f.detections,
  statistics: statisticsFromVector(f.blocks.stats),
  inferenceMs: 0,
});
const takenForEmpty = (f: CachedFeatures): boolean => {
  const v = decideVerdict(main, toModel(f));
  return !v.furnished && v.scene === 'interior';
};
interface Row {
  entry: ManifestEntry;
  features: CachedFeatures;
  heldOut: boolean;
  real: boolean;
  layout?: Float32Array;
}
const heldOutSet = new Set(calibration);
const realIdx = photos.flatMap((e, i) =>
  e.file.startsWith('houses/') && !NOT_ROOMS.has(e.label) ? [i] : [],
);
const realF = await loadFeatures(
  realIdx.map((i) => photos[i]!),
  opts,
);
const rows: Row[] = [
  ...chosen.flatMap((entry, i) =>
    takenForEmpty(masked[i]!)
      ? [{ entry, features: masked[i]!, heldOut: i < heldOut.length, real: false, src: i }]
      : [],
  ),
  ...realIdx.flatMap((i, k) =>
    takenForEmpty(realF[k]!)
      ? [{ entry: photos[i]!, features: realF[k]!, heldOut: heldOutSet.has(i), real: true }]
      : [],
  ),
];
// Layout descriptors from pixels (masked rows masked the same way).
const chosenIndex = new Map(chosen.map((e, i) => [e.absolutePath, i]));
for (const r of rows) {
  const decoded = await decodeForModel(await readFile(r.entry.absolutePath));
  const image = r.real
    ? decoded
    : maskFurniture(decoded, original[chosenIndex.get(r.entry.absolutePath)!]!.detections);
  r.layout = layoutDescriptor(image);
}
console.log(
  `rows: ${rows.filter((r) => !r.real && r.heldOut).length} masked held-out, ${rows.filter((r) => !r.real && !r.heldOut).length} masked fit-split, ${rows.filter((r) => r.real && r.heldOut).length} real held-out`,
);
const labels = main.labels.filter((l) => rows.some((r) => r.entry.label === l));

// ---------- heads ----------
type Variant = { name: string; blocks: string[] | null };
const withLayout = (r: Row) =>
  ({ ...r.features.blocks, layout: r.layout! }) as unknown as Record<FeatureBlock, Float32Array>;
function vectorOf(r: Row, blocks: string[]): Float64Array {
  return featureVector(withLayout(r), blocks as FeatureBlock[]);
}
async function fitHead(rowIdx: number[], blocks: string[]): Promise<DecodedLinearHead> {
  const design = buildDesign(
    rows.map((r) => r.entry),
    rows.map((r) => ({ blocks: withLayout(r), detections: r.features.detections })),
    blocks as FeatureBlock[],
    labels,
    rowIdx,
    [],
  );
  const model = await fitSoftmaxRegression(design.fit.x, design.fit.y, design.fit.weights, {
    classes: labels.length,
    l2: 0.1,
    epochs: 400,
    learningRate: 0.01,
  });
  const file = {
    labels,
    mean: encodeFloat16(design.mean),
    scale: encodeFloat16(design.scale),
    weights: model.weights.map(encodeFloat16),
    bias: model.bias.map((v) => Number(v.toPrecision(5))),
    temperature: 1,
  };
  return decodeLinearHead(file, design.mean.length)!;
}
const logSoftmax = (l: readonly number[]) => softmax(l).map((p) => Math.log(Math.max(p, 1e-300)));
const mainIndex = labels.map((l) => main.labels.indexOf(l));
function combined(head: DecodedLinearHead | null, r: Row, blocks: string[] | null): number[] {
  const x = featureVector(r.features.blocks, main.blocks);
  const m = logSoftmax(mainIndex.map((k) => headLogits(main, x)[k]!));
  if (head === null || blocks === null) return mainIndex.map((k) => headLogits(main, x)[k]!);
  const own = logSoftmax(headLogits(head, vectorOf(r, blocks)));
  return own.map((v, k) => (v + m[k]!) / 2);
}
/** The verdict's answer for an empty interior with these room probabilities (before fixture evidence). */
function answer(r: Row, probs: number[]): NamedAnswer {
  const classMax = r.features.blocks.classMax;
  const rooms = applyFixtureEvidence(Object.fromEntries(labels.map((l, k) => [l, probs[k]!])), classMax);
  const interior = decideVerdict(main, toModel(r.features)).sceneProbabilities.interior;
  const best = labels.reduce((a, b) => (rooms[b]! > rooms[a]! ? b : a));
  const fixtures = EMPTY_ROOM_FIXTURES[best as RoomType];
  const seen =
    fixtures === undefined ||
    fixtures.some(
      (f) =>
        (classMax[COCO_LABELS.indexOf(f as (typeof COCO_LABELS)[number])] ?? 0) >= EMPTY_FIXTURE_MIN_PEAK,
    );
  return { p: interior * rooms[best]!, right: best === r.entry.label, room: seen ? best : '' };
}

const heldOutRows = rows.flatMap((r, i) => (r.heldOut && !r.real ? [i] : []));
const realHeld = rows.flatMap((r, i) => (r.heldOut && r.real ? [i] : []));
const dealt = stratifiedFolds(
  heldOutRows.map((i) => rows[i]!.entry),
  FOLDS,
  seed,
);
const foldOf = new Map(heldOutRows.map((i, k) => [i, dealt[k]!]));
const realFold = new Map(realHeld.map((i, k) => [i, k % FOLDS]));

// Eval sets: empty rows of empty-dev and rooms-dev taken for empty.
const evalRows: { set: string; r: Row }[] = [];
for (const dir of ['empty-dev', 'rooms-dev']) {
  const entries = (await readManifest(path.resolve(repoRoot, '../shared/eval', dir))).map((e) => ({
    ...e,
    label: normaliseLabel(e.label),
  }));
  const f = await loadFeatures(entries, opts);
  for (let i = 0; i < entries.length; i++) {
    if (!takenForEmpty(f[i]!)) continue;
    const decoded = await decodeForModel(await readFile(entries[i]!.absolutePath));
    evalRows.push({
      set: dir,
      r: {
        entry: entries[i]!,
        features: f[i]!,
        heldOut: false,
        real: true,
        layout: layoutDescriptor(decoded),
      },
    });
  }
}

const variants: Variant[] = [
  { name: 'shipped recipe (both heads, main blocks)', blocks: [...main.blocks] },
  { name: 'both heads, main blocks + layout', blocks: [...main.blocks, 'layout'] },
  { name: 'both heads, layout + stats + classMax only', blocks: ['layout', 'stats', 'classMax'] },
  { name: 'main head alone, own empty-scene temperature', blocks: null },
];
for (const v of variants) {
  const oof = new Map<number, number[]>();
  for (let k = 0; k < FOLDS; k++) {
    const head =
      v.blocks === null
        ? null
        : await fitHead(
            rows.flatMap((r, i) => (!r.real && !(r.heldOut && foldOf.get(i) === k) ? [i] : [])),
            v.blocks,
          );
    for (const i of [
      ...heldOutRows.filter((i) => foldOf.get(i) === k),
      ...realHeld.filter((i) => realFold.get(i) === k),
    ])
      oof.set(i, combined(head, rows[i]!, v.blocks));
  }
  const t = fitTemperature(
    heldOutRows.map((i) => oof.get(i)!),
    Int32Array.from(heldOutRows, (i) => labels.indexOf(rows[i]!.entry.label)),
  );
  const ans = new Map([...oof].map(([i, l]) => [i, answer(rows[i]!, softmax(l, t))]));
  const masked = heldOutRows.map((i) => ans.get(i)!);
  const named = masked.filter((a) => a.room !== '');
  const thr = answerThresholdsByRoom(named, labels, 0.9, main.unknownBelow);
  const given = (a: NamedAnswer) => a.room !== '' && thr[a.room]! < 1 && a.p >= thr[a.room]!;
  const report = (idx: number[]) => {
    const g = idx.map((i) => ans.get(i)!).filter(given);
    return `${g.length}/${idx.length} answered, ${g.filter((a) => a.right).length} right`;
  };
  const acc = masked.filter((a) => a.right).length / masked.length;
  console.log(`\n## ${v.name}`);
  console.log(
    `  out of fold (masked held-out): accuracy ${(100 * acc).toFixed(1)}%, T ${t.toFixed(3)}, ECE ${expectedCalibrationError(masked).toFixed(3)}; ${report(heldOutRows)}`,
  );
  console.log(
    `  thresholds: ${Object.entries(thr)
      .map(([r, x]) => `${r} ${x.toFixed(3)}`)
      .join(', ')}`,
  );
  for (const l of labels) {
    const idx = heldOutRows.filter((i) => rows[i]!.entry.label === l);
    console.log(`    ${l}: ${report(idx)}`);
  }
  console.log(`  real empty listing rooms held out: ${report(realHeld)}`);
  // Final head on all masked rows, read on the eval sets.
  const head =
    v.blocks === null
      ? null
      : await fitHead(
          rows.flatMap((r, i) => (!r.real ? [i] : [])),
          v.blocks,
        );
  for (const { set, r } of evalRows) {
    const probs = softmax(combined(head, r, v.blocks), t);
    const a = answer(r, probs);
    const named = given(a) ? a.room : 'unknown';
    const best = labels.reduce((x, y) => (probs[labels.indexOf(y)]! > probs[labels.indexOf(x)]! ? y : x));
    console.log(
      `    ${set} ${path.basename(r.entry.file)} (${r.entry.label}): ${named} p=${a.p.toFixed(2)} best=${best}`,
    );
  }
}
