/** `npm run train` refuses bad options before it reads a photo. */
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { DEFAULT_HEAD_PATH } from '../../src/analysis/model/room-head.ts';
import { missingTrainingPhotos } from '../../scripts/lib/missing-photos.ts';
import { parseTrainOptions } from '../../scripts/lib/train-options.ts';

const ROOT = '/repo';
const parse = (argv: string[]) => parseTrainOptions(argv, ROOT);

/** Expects every value of `option` refused with `rule` in its message. */
function assertRefused(option: string, values: string[], rule: string): void {
  for (const value of values) {
    assert.throws(() => parse([`${option}=${value}`]), {
      message: `${option} must be ${rule}, not ${value}`,
    });
  }
}

void test('the defaults are the shipped recipe', () => {
  assert.deepEqual(parse([]), {
    data: path.resolve(ROOT, '../shared/train'),
    out: DEFAULT_HEAD_PATH,
    cache: path.join(ROOT, 'data/feature-cache'),
    seed: 20240611,
    blocks: ['headMean', 'backboneMean', 'se12', 'se13', 'se14', 'classMax', 'stats'],
    fit: { l2: 0.1, epochs: 400, learningRate: 0.01 },
    calibrationFraction: 0.15,
    unknownBelow: 0.35,
    syntheticPlans: 600,
    inputSize: 512,
    threads: undefined,
    folds: 0,
  });
});

void test('numeric options outside their range or not plain numbers are refused with the rule', () => {
  assertRefused('--seed', ['4294967296', '1e3', '7.5', '-1', ''], 'a whole number from 0 to 4294967295');
  assertRefused('--l2', ['NaN', '0x1', '1e', '1e999', '1,5', '-0.1', '101', ''], 'a number from 0 to 100');
  assertRefused('--epochs', ['0', '100001', '2.5', 'all'], 'a whole number from 1 to 100000');
  assertRefused('--learning-rate', ['0', '0.0', '1.5', '1e300', 'Infinity'], 'a number above 0, at most 1');
  assertRefused('--calibration', ['0.6', '1', '-0.1', '15%'], 'a number from 0 to 0.5');
  assertRefused('--unknown-below', ['1.01', '-0.01', 'low'], 'a number from 0 to 1');
  assertRefused('--synthetic-plans', ['100001', 'none'], 'a whole number from 0 to 100000');
  assertRefused('--threads', ['0', '65', 'two'], 'a whole number from 1 to 64');
  assertRefused(
    '--input-size',
    ['0x200', '500', '96', '800', '512.0', ''],
    'a multiple of 32 from 128 to 768',
  );
  assertRefused('--cross-validate', ['1', '21', 'five', '3.5', ''], 'a number of folds from 2 to 20');
});

void test('numeric options are taken at the ends of their ranges, decimals in any spelling', () => {
  const low = parse(['--seed=+0', '--l2=0', '--epochs=1', '--learning-rate=1e-3', '--calibration=0']);
  assert.deepEqual(
    [low.seed, low.fit, low.calibrationFraction],
    [0, { l2: 0, epochs: 1, learningRate: 0.001 }, 0],
  );
  const lower = parse(['--unknown-below=0', '--synthetic-plans=0', '--threads=1', '--input-size=128']);
  assert.deepEqual(
    [lower.unknownBelow, lower.syntheticPlans, lower.threads, lower.inputSize],
    [0, 0, 1, 128],
  );
  const high = parse([
    '--seed=4294967295',
    '--l2=1E2',
    '--epochs=100000',
    '--learning-rate=1.',
    '--calibration=.5',
  ]);
  assert.deepEqual(
    [high.seed, high.fit, high.calibrationFraction],
    [4294967295, { l2: 100, epochs: 100000, learningRate: 1 }, 0.5],
  );
  const higher = parse([
    '--unknown-below=1',
    '--synthetic-plans=100000',
    '--threads=64',
    '--cross-validate=20',
  ]);
  assert.deepEqual(
    [higher.unknownBelow, higher.syntheticPlans, higher.threads, higher.folds],
    [1, 100000, 64, 20],
  );
});

void test('--out must name a file in a folder that exists', () => {
  const here = path.resolve(import.meta.dirname);
  for (const out of [
    '',
    '/nonexistent/folder/head.json',
    path.join(here, 'train-arguments.test.ts', 'head.json'),
  ]) {
    assert.throws(() => parse([`--out=${out}`]), {
      message: `--out must be a file in an existing folder, not ${out}`,
    });
  }
  assert.equal(parse(['--out', path.join(here, 'head.json')]).out, path.join(here, 'head.json'));
});

void test('an unknown or repeated feature block is refused by name', () => {
  assert.throws(() => parse(['--blocks', 'headMean,colour']), {
    message: /^unknown feature block "colour" \(known: headMean, /,
  });
  assert.throws(() => parse(['--blocks', 'se12,stats,se12']), {
    message: 'feature block "se12" is named twice in --blocks',
  });
  assert.deepEqual(parse(['--blocks', 'stats, se12']).blocks, ['stats', 'se12']);
});

void test('--out with --cross-validate, which writes no head, is refused', () => {
  assert.throws(() => parse(['--cross-validate', '5', '--out', 'head.json']), {
    message: '--cross-validate writes no head; leave out --out, or fit without --cross-validate',
  });
  assert.equal(parse(['--cross-validate', '5']).folds, 5);
});

void test('the script stops on a bad option before it reads a photo', async () => {
  const script = path.resolve(import.meta.dirname, '../../scripts/train-room-classifier.ts');
  // The data folder does not exist: a check made after reading would fail on that instead.
  const argv = ['--import', 'tsx', script, '--data', '/nonexistent/photos', '--l2', 'fast'];
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(process.execPath, argv, (error, _stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stderr });
    });
  });
  assert.equal(code, 1);
  assert.ok(stderr.includes('Error: --l2 must be a number from 0 to 100, not fast\n'), stderr);
  assert.doesNotMatch(stderr, /ENOENT|manifest/);
});

void test('without its photos the script says in one line what it needs, exit code 2', async () => {
  const script = path.resolve(import.meta.dirname, '../../scripts/train-room-classifier.ts');
  const argv = ['--import', 'tsx', script, '--data', '/nonexistent/photos'];
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(process.execPath, argv, (error, _stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stderr });
    });
  });
  assert.equal(code, 2);
  assert.equal(
    stderr,
    'train: no labelled photos in /nonexistent/photos: give a folder with --data DIR holding the photos and ' +
      'a manifest.csv with columns file,label[,source]; docs/analyzer-model.md#the-photos says where to get them\n',
  );
  // Without --data, the line says the folder it looked in was the default.
  assert.match(
    missingTrainingPhotos('/repo/../shared/train', false),
    /^train: no labelled photos in \/shared\/train \(the default\): give /,
  );
});
