/**
 * Fits the empty-room head and writes it into the head file (`emptyRooms`); run it after every
 * `npm run train`, whose head it reads:
 *
 *   node --import tsx scripts/fit-empty-rooms.ts [--data ../shared/train] [--head <file>]
 *        [--per-group 50] [--fit-photos 50] [--precision 0.9] [--seed 20240611] [--threads n]
 *        [--real-empties houses/] [--real-empty-use measure|fit] [--calibration-out <json>] [--dry-run]
 *
 * The training photos hardly show empty rooms, so they are made: of the photos `npm run train` held out
 * for calibration (the main head never fitted on them; same seed and fraction), up to `--per-group` of
 * each interior (label, source) group are taken, and every detected object that is not a fixture of the
 * room is painted over (scripts/lib/furniture-mask.ts). On the masked photos the verdict takes for
 * empty rooms, a second head is fitted (plus up to `--fit-photos` masked photos per group of the fit
 * split, for fitting only); read together with the main head (empty-room-head.ts), its temperature is
 * fitted on 5-fold out-of-fold readings. Each room's threshold (`answerAboveByRoom`) is the lowest
 * probability from which every stricter threshold is right in at least `--precision` of the
 * out-of-fold answers naming that room, never below the main head's `unknownBelow`; `answerAbove` is
 * the same over all rooms at once, the fallback for a room without its own.
 *
 * The interior photos under `--real-empties` that the verdict takes for empty as photographed are read
 * out of fold too and reported apart (`measure`), or also fitted on and counted (`fit`). Features are
 * cached under data/feature-cache; photos are read in place.
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
  type RoomHead,
  type RoomHeadFile,
} from '../src/analysis/model/room-head.ts';
import { decideVerdict } from '../src/analysis/model/scene-verdict.ts';
import type { RoomType } from '../src/analysis/scene-types.ts';
import {
  answerThreshold,
  answerThresholdsByRoom,
  expectedCalibrationError,
  type NamedAnswer,
} from './lib/calibration.ts';
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
    'real-empties': { type: 'string', default: 'houses/' },
    'real-empty-use': { type: 'string', default: 'measure' },
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
const realFolder = args['real-empties'];
const realUse = args['real-empty-use'];
if (realUse !== 'fit' && realUse !== 'measure') {
  console.error(`--real-empty-use must be fit or measure, not ${realUse}`);
  process.exit(2);
}
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

/** A photo the empty head is fitted on or measured with. */
interface Row {
  entry: ManifestEntry;
  features: CachedFeatures;
  /** In the split `npm run train` held out: the main head never fitted on it. */
  heldOut: boolean;
  /** Empty as photographed (not masked). */
  real: boolean;
}

const toModelFeatures = (f: CachedFeatures) => ({
  blocks: f.blocks,
  detections: f.detections,
  statistics: statisticsFromVector(f.blocks.stats),
  inferenceMs: 0,
});
const { emptyRooms: _previous, ...mainFile } = headFile;
const main = parseRoomHead(mainFile);
const takenForEmpty = (f: CachedFeatures): boolean => {
  const verdict = decideVerdict(main, toModelFeatures(f));
  return !verdict.furnished && verdict.scene === 'interior';
};

// Rooms empty as photographed: the interior photos under `--real-empties` that the verdict takes for
// empty unmasked. Among the listing photos these are bathrooms and built-in kitchens, which have no
// loose furniture, and hardly a vacant bedroom.
const heldOutIndices = new Set(calibration);
const realCandidates = photos.flatMap((e, i) =>
  realFolder !== '' && e.file.startsWith(realFolder) && !NOT_ROOMS.has(e.label) ? [i] : [],
);
const realFeatures = await loadFeatures(
  realCandidates.map((i) => photos[i]!),
  cacheOptions,
);
const real: Row[] = realCandidates.flatMap((i, k) =>
  takenForEmpty(realFeatures[k]!)
    ? [{ entry: photos[i]!, features: realFeatures[k]!, heldOut: heldOutIndices.has(i), real: true }]
    : [],
);
const realFiles = new Set(real.map((r) => r.entry.file));
// Only the masked photos the verdict takes for empty interiors: those are what the empty head serves.
// A photo that is empty as it is, when real empties are fitted, is fitted as it is, not masked too.
const maskedRows: Row[] = chosen.flatMap((entry, i) =>
  (realUse === 'fit' && realFiles.has(entry.file)) || !takenForEmpty(masked[i]!)
    ? []
    : [{ entry, features: masked[i]!, heldOut: i < heldOut.length, real: false }],
);
const rows = [...maskedRows, ...real];
const entries = rows.map(({ entry }) => entry);
const features = rows.map(({ features: f }) => f);
const labels = main.labels.filter((label) => entries.some((e) => e.label === label));
/** Fitted on (when held out, by the heads of the other folds only). */
const fitted = (r: Row): boolean => !r.real || realUse === 'fit';
/** Held out and fitted: the answers the temperature and the threshold are fitted on. */
const counted = (r: Row): boolean => r.heldOut && fitted(r);
const count = (keep: (r: Row) => boolean): number => rows.filter(keep).length;
console.log(
  `masked photos the verdict takes for empty rooms: ${count((r) => !r.real && r.heldOut)} held-out, ` +
    `${count((r) => !r.real && !r.heldOut)} fit-split; real empty rooms under ${realFolder || '(none)'}: ` +
    `${count((r) => r.real && r.heldOut)} held-out, ${count((r) => r.real && !r.heldOut)} fit-split (${realUse})`,
);

// Out of fold: each held-out photo is read by an empty head fitted without it, combined with the main head.
const heldOutRows = rows.flatMap((r, i) => (r.heldOut ? [i] : []));
const foldOf = photoFolds(heldOutRows);
const outOfFold = new Map<number, { logits: number[]; head: EmptyRoomHeadFile }>();
for (let k = 0; k < FOLDS; k++) {
  const fitRows = rows.flatMap((r, i) => (fitted(r) && !(r.heldOut && foldOf.get(i) === k) ? [i] : []));
  const head = await fitEmptyHead(fitRows);
  const parsed = parseEmptyRoomHead(head, main.labels, main.mean.length);
  for (const i of heldOutRows.filter((i) => foldOf.get(i) === k)) {
    const x = featureVector(features[i]!.blocks, main.blocks);
    outOfFold.set(i, { logits: combinedEmptyRoomLogits(parsed, x, headLogits(main, x)), head });
  }
}
const countedRows = heldOutRows.filter((i) => counted(rows[i]!));
const temperature = fitTemperature(
  countedRows.map((i) => outOfFold.get(i)!.logits),
  Int32Array.from(countedRows, (i) => labels.indexOf(entries[i]!.label)),
);
/** The verdict's answer on held-out row i: its best room's probability, whether that room is right, and the room named ('' if none). */
function answerOn(head: RoomHead, i: number): NamedAnswer {
  const verdict = decideVerdict(head, toModelFeatures(features[i]!));
  const best = labels.reduce((a, b) =>
    (verdict.roomProbabilities[b as RoomType] ?? 0) > (verdict.roomProbabilities[a as RoomType] ?? 0) ? b : a,
  );
  const room = verdict.roomType === 'unknown' ? '' : verdict.roomType;
  return { p: verdict.roomConfidence, right: best === entries[i]!.label, room };
}
// Each photo through the whole verdict, with its fold's head, the fitted temperature and no threshold:
// it names its best room unless a rule (a bathroom's or a kitchen's fixture not seen) says `unknown`.
const answerOf = new Map(
  heldOutRows.map((i) => {
    const emptyRooms = { ...outOfFold.get(i)!.head, temperature, answerAbove: 0 };
    return [i, answerOn(parseRoomHead({ ...mainFile, emptyRooms }), i)] as const;
  }),
);
const answers = countedRows.map((i) => answerOf.get(i)!);
const named = answers.filter((a) => a.room !== '');
const answerAbove = answerThreshold(named, precision);
const answerAboveByRoom = answerThresholdsByRoom(named, labels, precision, main.unknownBelow);
const isAnswered = (a: NamedAnswer): boolean => a.room !== '' && a.p >= answerAboveByRoom[a.room]!;
const answered = answers.filter(isAnswered);
const right = answered.filter((a) => a.right).length;
const atMainTemperature = countedRows.map((i) => answerOn(main, i));
const share = (rows: readonly NamedAnswer[]): string =>
  (rows.filter((a) => a.right).length / rows.length).toFixed(3);
console.log(
  `out of fold: accuracy ${share(answers)} (main head alone ${share(atMainTemperature)}), temperature ` +
    `${temperature.toFixed(3)}, expected calibration error ${expectedCalibrationError(answers).toFixed(3)} ` +
    `(main head alone ${expectedCalibrationError(atMainTemperature).toFixed(3)})`,
);
console.log(
  `answer thresholds (one for all rooms: ${answerAbove.toFixed(3)}): ` +
    Object.entries(answerAboveByRoom)
      .map(([room, t]) => `${room} ${t.toFixed(3)}`)
      .join(', '),
);
console.log(
  `answers ${answered.length}/${answers.length}, right ${right}/${answered.length} (precision asked: ${precision}, per room)`,
);
for (const [name, keep] of [
  ['masked held-out photos', (r: Row) => !r.real],
  ['real empty rooms held out', (r: Row) => r.real],
] as const) {
  for (const label of ['all', ...labels]) {
    const subset = heldOutRows.filter(
      (i) => keep(rows[i]!) && (label === 'all' || entries[i]!.label === label),
    );
    if (subset.length === 0) continue;
    const given = subset.map((i) => answerOf.get(i)!).filter(isAnswered);
    console.log(
      `  ${name}, ${label}: answered ${given.length}/${subset.length}, ` +
        `right ${given.filter((a) => a.right).length}/${given.length}`,
    );
  }
}
if (args['calibration-out']) {
  // The out-of-fold answers, for the calibration test (test/analysis/empty-room-calibration.test.ts).
  const stored = answers.map((a) => [Number(a.p.toFixed(4)), a.right ? 1 : 0, a.room]);
  await writeFile(
    path.resolve(args['calibration-out']),
    `${JSON.stringify({ answerAbove, answerAboveByRoom, rows: stored })}\n`,
  );
}

if (!args['dry-run']) {
  const round = (v: number): number => Number(v.toPrecision(4));
  const final = await fitEmptyHead(rows.flatMap((r, i) => (fitted(r) ? [i] : [])));
  const out: RoomHeadFile = {
    ...mainFile,
    emptyRooms: {
      ...final,
      temperature: round(temperature),
      answerAbove: round(answerAbove),
      answerAboveByRoom: Object.fromEntries(
        Object.entries(answerAboveByRoom).map(([room, t]) => [room, round(t)]),
      ),
    },
    provenance: {
      ...headFile.provenance,
      emptyRooms: {
        note:
          'Empty-room head fitted on training photos with their furniture masked out' +
          (realUse === 'fit' ? ' and on training photos of rooms empty as they are' : '') +
          '; temperature and answer thresholds (one per room) fitted out of fold on the held-out ones ' +
          '(scripts/fit-empty-rooms.ts).',
        photos: count((r) => !r.real && r.heldOut),
        fitSplitPhotos: count((r) => !r.real && !r.heldOut),
        realEmpties: {
          folder: realFolder,
          use: realUse,
          heldOut: count((r) => r.real && r.heldOut),
          fitSplit: count((r) => r.real && !r.heldOut),
        },
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

/**
 * The fold of each held-out row: rows of one photo share a fold. The rows counted are dealt first, as
 * they would be alone, so photos only measured never move the folds of those the head is chosen on.
 */
function photoFolds(heldOutRows: readonly number[]): Map<number, number> {
  const foldOfFile = new Map<string, number>();
  for (const group of [heldOutRows.filter((i) => counted(rows[i]!)), heldOutRows]) {
    const unseen = group.filter(
      (i, k) =>
        !foldOfFile.has(entries[i]!.file) &&
        group.findIndex((j) => entries[j]!.file === entries[i]!.file) === k,
    );
    const dealt = stratifiedFolds(
      unseen.map((i) => entries[i]!),
      FOLDS,
      seed,
    );
    unseen.forEach((i, k) => foldOfFile.set(entries[i]!.file, dealt[k]!));
  }
  return new Map(heldOutRows.map((i) => [i, foldOfFile.get(entries[i]!.file)!]));
}
