/**
 * Fits the empty-room head and writes it into the head file (`emptyRooms`); run it after every
 * `npm run train`, whose head it reads:
 *
 *   node --import tsx scripts/fit-empty-rooms.ts [--data ../shared/train] [--head <file>]
 *        [--per-group 50] [--fit-photos 50] [--precision 0.9] [--seed 20240611] [--threads n]
 *        [--calibration-out <json>] [--dry-run]
 *
 * The training photos hardly show empty rooms, so they are made: of the photos `npm run train` held out
 * for calibration (the main head never fitted on them; same seed and fraction), up to `--per-group` of
 * each interior (label, source) group are taken, and every detected object that is not a fixture of the
 * room is painted over (scripts/lib/furniture-mask.ts). On the masked photos the verdict takes for
 * empty rooms, a second head is fitted (plus up to `--fit-photos` masked photos per group of the fit
 * split, for fitting only); read together with the main head (empty-room-head.ts), its temperature is
 * fitted on 5-fold out-of-fold readings, and `answerAbove` is the lowest probability from which every
 * stricter threshold is right in at least `--precision` of the out-of-fold answers. Features of both
 * versions are cached under data/feature-cache; photos are read in place.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import {
  combinedEmptyRoomLogits,
  type EmptyRoomHeadFile,
  parseEmptyRoomHead,
} from '../src/analysis/model/empty-room-head.ts';
import { encodeFloat16 } from '../src/analysis/model/float16-codec.ts';
import { statisticsFromVector } from '../src/analysis/model/image-statistics.ts';
import {
  DEFAULT_HEAD_PATH,
  featureVector,
  headLogits,
  parseRoomHead,
  type RoomHeadFile,
} from '../src/analysis/model/room-head.ts';
import { decideVerdict } from '../src/analysis/model/scene-verdict.ts';
import { answerThreshold, expectedCalibrationError } from './lib/calibration.ts';
import { loadFeatures, type CachedFeatures } from './lib/feature-cache.ts';
import { maskFurniture } from './lib/furniture-mask.ts';
import { readManifest, type ManifestEntry } from './lib/manifest.ts';
import { decimalNumber, wholeNumber } from './lib/number-option.ts';
import { fitSoftmaxRegression, fitTemperature } from './lib/softmax-regression.ts';
import { buildDesign, normaliseLabel, stratifiedFolds, stratifiedSplit } from './lib/training-data.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: path.resolve(repoRoot, '../shared/train') },
    head: { type: 'string', default: DEFAULT_HEAD_PATH },
    'per-group': { type: 'string', default: '50' },
    'fit-photos': { type: 'string', default: '50' },
    seed: { type: 'string', default: '20240611' },
    calibration: { type: 'string', default: '0.15' },
    'synthetic-plans': { type: 'string', default: '600' },
    precision: { type: 'string', default: '0.9' },
    'calibration-out': { type: 'string' },
    threads: { type: 'string' },
    cache: { type: 'string', default: path.join(repoRoot, 'data/feature-cache') },
    'dry-run': { type: 'boolean', default: false },
  },
});
const perGroup = wholeNumber('--per-group', args['per-group'], 1, 100_000);
const fitPerGroup = wholeNumber('--fit-photos', args['fit-photos'], 0, 100_000);
const seed = wholeNumber('--seed', args.seed, 0, 2 ** 32 - 1);
const calibrationFraction = decimalNumber('--calibration', args.calibration, 0.01, 0.5);
const syntheticPlans = wholeNumber('--synthetic-plans', args['synthetic-plans'], 0, 100_000);
const precision = decimalNumber('--precision', args.precision, 0.5, 1);
const threads = args.threads === undefined ? undefined : wholeNumber('--threads', args.threads, 1, 64);
const headPath = path.resolve(args.head);
/** Masking version: part of the cache key of masked features. */
const MASK_VARIANT = 'furniture-masked-v1';
const NOT_ROOMS = new Set(['exterior', 'floor_plan', 'other']);
/** Folds of the out-of-fold reading the temperature and threshold are fitted on. */
const FOLDS = 5;
/** L2 of the empty head: the main head's. */
const L2 = 0.1;

const headFile = JSON.parse(await readFile(headPath, 'utf8')) as RoomHeadFile;
const photos = (await readManifest(args.data)).map((e) => ({ ...e, label: normaliseLabel(e.label) }));
// `npm run train` split its photos together with the drawn plans; the same entries (the plans need
// not exist) deal the same calibration split.
const plans: ManifestEntry[] = Array.from({ length: syntheticPlans }, (_, i) => ({
  file: `plan-${i}`,
  absolutePath: '',
  label: 'floor_plan',
  source: 'synthetic',
}));
const { fit, calibration } = stratifiedSplit([...photos, ...plans], calibrationFraction, seed);
/** Up to `n` interior photos of each (label, source) group among `indices`, in their order. */
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
const heldOut = perInteriorGroup(calibration, perGroup);
// Photos the main head was fitted on may teach the empty head too, never calibrate it.
const fitOnly = fitPerGroup > 0 ? perInteriorGroup(fit, fitPerGroup) : [];
const chosen = [...heldOut, ...fitOnly];
console.log(
  `empty rooms: ${heldOut.length} held-out and ${fitOnly.length} fit-split interior photos of ${args.data}`,
);

const cacheOptions = { cacheDir: args.cache, inputSize: headFile.inputSize ?? 512, threads };
const original = await loadFeatures(chosen, cacheOptions);
const masked = await loadFeatures(chosen, {
  ...cacheOptions,
  variant: { name: MASK_VARIANT, transform: (image, i) => maskFurniture(image, original[i]!.detections) },
});

const toModelFeatures = (f: CachedFeatures) => ({
  blocks: f.blocks,
  detections: f.detections,
  statistics: statisticsFromVector(f.blocks.stats),
  inferenceMs: 0,
});
// Only the masked photos the verdict takes for empty interiors: those are what the empty head serves.
const { emptyRooms: _previous, ...mainFile } = headFile;
const main = parseRoomHead(mainFile);
const empty = chosen.flatMap((entry, i) => {
  const verdict = decideVerdict(main, toModelFeatures(masked[i]!));
  if (verdict.furnished || verdict.scene !== 'interior') return [];
  return [{ entry, features: masked[i]!, heldOut: i < heldOut.length }];
});
const entries = empty.map(({ entry }) => entry);
const features = empty.map(({ features: f }) => f);
const labels = main.labels.filter((label) => entries.some((e) => e.label === label));
const calibrationRows = empty.flatMap((e, i) => (e.heldOut ? [i] : []));
const extraRows = empty.flatMap((e, i) => (e.heldOut ? [] : [i]));
console.log(
  `masked photos the verdict takes for empty rooms: ${calibrationRows.length} held-out, ${extraRows.length} fit-split`,
);

// Out of fold: each held-out photo is read by an empty head fitted without it, combined with the main head.
const calibrationEntries = calibrationRows.map((i) => entries[i]!);
const foldOf = stratifiedFolds(calibrationEntries, FOLDS, seed);
const outOfFold: { logits: number[]; head: EmptyRoomHeadFile }[] = [];
for (let k = 0; k < FOLDS; k++) {
  const fitRows = calibrationRows.filter((_, r) => foldOf[r] !== k);
  const testRows = calibrationRows.flatMap((i, r) => (foldOf[r] === k ? [r] : []));
  const head = await fitEmptyHead([...fitRows, ...extraRows]);
  const parsed = parseEmptyRoomHead(head, main.labels, main.mean.length);
  for (const r of testRows) {
    const x = featureVector(features[calibrationRows[r]!]!.blocks, main.blocks);
    outOfFold[r] = { logits: combinedEmptyRoomLogits(parsed, x, headLogits(main, x)), head };
  }
}
const y = Int32Array.from(calibrationEntries, (e) => labels.indexOf(e.label));
const temperature = fitTemperature(
  outOfFold.map((o) => o.logits),
  y,
);
// Each photo through the whole verdict, with its fold's head, the fitted temperature and no threshold.
const answers = calibrationEntries.map((entry, r) => {
  const head = parseRoomHead({
    ...mainFile,
    emptyRooms: { ...outOfFold[r]!.head, temperature, answerAbove: 0 },
  });
  const verdict = decideVerdict(head, toModelFeatures(features[calibrationRows[r]!]!));
  return { p: verdict.roomConfidence, right: verdict.roomType === entry.label };
});
const answerAbove = answerThreshold(answers, precision);
const answered = answers.filter((a) => a.p >= answerAbove);
const right = answered.filter((a) => a.right).length;
const atMainTemperature = calibrationEntries.map((entry, r) => {
  const verdict = decideVerdict(main, toModelFeatures(features[calibrationRows[r]!]!));
  return { p: verdict.roomConfidence, right: verdict.roomType === entry.label };
});
console.log(
  `out of fold: accuracy ${(answers.filter((a) => a.right).length / answers.length).toFixed(3)} ` +
    `(main head alone ${(atMainTemperature.filter((a) => a.right).length / answers.length).toFixed(3)}), ` +
    `temperature ${temperature.toFixed(3)}, expected calibration error ${expectedCalibrationError(answers).toFixed(3)} ` +
    `(main head alone ${expectedCalibrationError(atMainTemperature).toFixed(3)})`,
);
console.log(
  `answer threshold ${answerAbove.toFixed(3)}: answers ${answered.length}/${answers.length}, ` +
    `right ${right}/${answered.length} (precision asked: ${precision})`,
);
if (args['calibration-out']) {
  // The out-of-fold answers, for the calibration test (test/analysis/empty-room-calibration.test.ts).
  const rows = answers.map((a) => [Number(a.p.toFixed(4)), a.right ? 1 : 0]);
  await writeFile(path.resolve(args['calibration-out']), `${JSON.stringify({ answerAbove, rows })}\n`);
}

if (!args['dry-run']) {
  const round = (v: number): number => Number(v.toPrecision(4));
  const final = await fitEmptyHead(entries.map((_, i) => i));
  const out: RoomHeadFile = {
    ...mainFile,
    emptyRooms: { ...final, temperature: round(temperature), answerAbove: round(answerAbove) },
    provenance: {
      ...headFile.provenance,
      emptyRooms: {
        note:
          'Empty-room head fitted on held-out training photos with their furniture masked out; temperature ' +
          'and answer threshold fitted out of fold (scripts/fit-empty-rooms.ts).',
        photos: calibrationRows.length,
        fitSplitPhotos: extraRows.length,
        perGroup,
        fitPerGroup,
        mask: MASK_VARIANT,
        l2: L2,
        precision,
        answered: answered.length,
        right,
        fitted: new Date().toISOString().slice(0, 10),
      },
    },
  };
  parseRoomHead(out);
  await writeFile(headPath, `${JSON.stringify(out)}\n`);
  console.log(`wrote ${path.relative(process.cwd(), headPath)}`);
}

/** Fits an empty-room head on the given rows (normalisation from them only); temperature left at 1. */
async function fitEmptyHead(rows: number[]): Promise<EmptyRoomHeadFile> {
  const design = buildDesign(entries, features, main.blocks, labels, rows, []);
  const model = await fitSoftmaxRegression(design.fit.x, design.fit.y, design.fit.weights, {
    classes: labels.length,
    l2: L2,
    epochs: 400,
    learningRate: 0.01,
  });
  return {
    labels,
    mean: encodeFloat16(design.mean),
    scale: encodeFloat16(design.scale),
    weights: model.weights.map(encodeFloat16),
    bias: model.bias.map((v) => Number(v.toPrecision(5))),
    temperature: 1,
    answerAbove: 0,
  };
}
