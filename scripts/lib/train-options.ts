/**
 * The options of `npm run train`, read and checked before any photo is read: a typo must stop the run
 * with the rule it broke, not fit a head of NaNs after half an hour of feature extraction.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { FEATURE_BLOCKS, type FeatureBlock } from '../../src/analysis/model/model-features.ts';
import {
  INPUT_SIZE_RULE,
  isValidInputSize,
  NETWORK_INPUT_SIZE,
} from '../../src/analysis/model/network-input.ts';
import { DEFAULT_HEAD_PATH } from '../../src/analysis/model/room-head.ts';
import { DECIMAL, decimalNumber, parseNumber, WHOLE, wholeNumber } from './number-option.ts';
import type { FitOptions } from './softmax-regression.ts';

/** What `npm run train` was asked to do, every number checked. */
export interface TrainOptions {
  /** Folder with manifest.csv (file,label[,source]). */
  data: string;
  /** Head file to write (the committed head unless --out says otherwise). */
  out: string;
  /** Feature cache folder. */
  cache: string;
  seed: number;
  blocks: FeatureBlock[];
  fit: Omit<FitOptions, 'classes'>;
  /** Share of each (label, source) group held out to calibrate the temperature. */
  calibrationFraction: number;
  unknownBelow: number;
  /** Floor plans drawn in code when the data has none. */
  syntheticPlans: number;
  inputSize: number;
  /** Feature-extraction threads (default: one per CPU). */
  threads: number | undefined;
  /** Folds to cross-validate with instead of fitting a head; 0 fits and writes the head. */
  folds: number;
}

/** Where the photos are read from without --data: the development machine's copy beside the repository. */
export const defaultTrainingData = (repoRoot: string): string => path.resolve(repoRoot, '../shared/train');

/** Reads `argv` (the arguments after the script); throws with the broken rule on bad input. */
export function parseTrainOptions(argv: string[], repoRoot: string): TrainOptions {
  const { values: args } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string', default: defaultTrainingData(repoRoot) },
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

  const blocks = args.blocks.split(',').map((b) => b.trim()) as FeatureBlock[];
  const unknownBlock = blocks.find((b) => !(FEATURE_BLOCKS as readonly string[]).includes(b));
  if (unknownBlock !== undefined)
    throw new Error(`unknown feature block "${unknownBlock}" (known: ${FEATURE_BLOCKS.join(', ')})`);
  // Named twice, a block would be fitted twice over: a typo, not a choice.
  const repeated = blocks.find((b, i) => blocks.indexOf(b) !== i);
  if (repeated !== undefined) throw new Error(`feature block "${repeated}" is named twice in --blocks`);

  const folds =
    args['cross-validate'] === undefined
      ? 0
      : parseNumber(
          '--cross-validate',
          args['cross-validate'],
          WHOLE,
          'a number of folds from 2 to 20',
          (n) => n >= 2 && n <= 20,
        );
  // A head file asked for would silently not be written: say so before reading a photo.
  if (folds > 0 && args.out !== undefined)
    throw new Error('--cross-validate writes no head; leave out --out, or fit without --cross-validate');

  // Found out only at the end of a fit otherwise, after every photo was read.
  const out = args.out ?? DEFAULT_HEAD_PATH;
  const folder = path.dirname(path.resolve(out));
  if (out === '' || !existsSync(folder) || !statSync(folder).isDirectory())
    throw new Error(`--out must be a file in an existing folder, not ${out}`);

  return {
    data: args.data,
    out,
    cache: args.cache,
    seed: wholeNumber('--seed', args.seed, 0, 2 ** 32 - 1),
    blocks,
    fit: {
      l2: decimalNumber('--l2', args.l2, 0, 100),
      epochs: wholeNumber('--epochs', args.epochs, 1, 100_000),
      // Adam's step; 0 would not move, and steps far above 1 diverge to NaN weights.
      learningRate: parseNumber(
        '--learning-rate',
        args['learning-rate'],
        DECIMAL,
        'a number above 0, at most 1',
        (n) => n > 0 && n <= 1,
      ),
    },
    // Beyond a half, fewer photos would be fitted than held out to calibrate.
    calibrationFraction: decimalNumber('--calibration', args.calibration, 0, 0.5),
    unknownBelow: decimalNumber('--unknown-below', args['unknown-below'], 0, 1),
    syntheticPlans: wholeNumber('--synthetic-plans', args['synthetic-plans'], 0, 100_000),
    inputSize: parseNumber('--input-size', args['input-size'], WHOLE, INPUT_SIZE_RULE, isValidInputSize),
    threads: args.threads === undefined ? undefined : wholeNumber('--threads', args.threads, 1, 64),
    folds,
  };
}
