/** `npm run train` refuses bad options before it reads a photo. */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/train-room-classifier.ts');

/**
 * Runs the training script with `args`, a data folder that does not exist (a check made after
 * reading would fail on that instead) and a head file in a temporary folder.
 */
async function train(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'train-args-'));
  try {
    const argv = [
      '--import',
      'tsx',
      SCRIPT,
      '--data',
      path.join(dir, 'missing'),
      '--out',
      path.join(dir, 'head.json'),
      ...args,
    ];
    return await new Promise((resolve) => {
      execFile(process.execPath, argv, (error, _stdout, stderr) => {
        resolve({ code: error ? (error.code as number) : 0, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs train once per value of `option` and expects each refused with `rule` in its message. */
async function assertRefused(option: string, values: string[], rule: string): Promise<void> {
  const results = await Promise.all(values.map((value) => train([option, value])));
  for (const [i, value] of values.entries()) {
    assert.equal(results[i]!.code, 1, value);
    assert.ok(
      results[i]!.stderr.includes(`Error: ${option} must be ${rule}, not ${value}\n`),
      `${value}: ${results[i]!.stderr}`,
    );
  }
}

void test('train refuses an input side that is not a plain multiple of 32 in range', async () => {
  await assertRefused(
    '--input-size',
    ['0x200', '500', '96', '800', '512.0', ''],
    'a multiple of 32 from 128 to 768',
  );
});

void test('train refuses an unknown feature block by name', async () => {
  const result = await train(['--blocks', 'headMean,colour']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Error: unknown feature block "colour" \(known: headMean, /);
});

void test('train refuses a number of cross-validation folds outside 2 to 20', async () => {
  await assertRefused('--cross-validate', ['1', '21', 'five', '3.5', ''], 'a number of folds from 2 to 20');
});

void test('train refuses --out with --cross-validate, which writes no head', async () => {
  const result = await train(['--cross-validate', '5']);
  assert.equal(result.code, 1);
  assert.ok(
    result.stderr.includes(
      'Error: --cross-validate writes no head; leave out --out, or fit without --cross-validate\n',
    ),
    result.stderr,
  );
});

void test('train refuses fit options that are not plain numbers in their range', async () => {
  await Promise.all([
    assertRefused('--seed', ['4294967296', '1e3', '7.5', ''], 'a whole number from 0 to 4294967295'),
    assertRefused('--l2', ['NaN', '0x1', '1e', '1e999', '1,5', ''], 'a number of at least 0'),
    assertRefused('--epochs', ['0', '100001', '2.5', 'all'], 'a whole number from 1 to 100000'),
    assertRefused('--learning-rate', ['0', '0.0', 'Infinity'], 'a number above 0'),
    assertRefused('--calibration', ['0.6', '1', '15%'], 'a fraction from 0 to 0.5'),
    assertRefused('--unknown-below', ['1.01', 'low'], 'a fraction from 0 to 1'),
    assertRefused('--synthetic-plans', ['100001', 'none'], 'a whole number from 0 to 100000'),
    assertRefused('--threads', ['0', '65', 'two'], 'a whole number from 1 to 64'),
  ]);
});

void test('train accepts each numeric option at the ends of its range, decimals in any spelling', async () => {
  const lowEnds = [
    ['--seed', '0', '--l2', '0', '--epochs', '1', '--learning-rate', '1e-3'],
    ['--calibration', '0', '--unknown-below', '0', '--synthetic-plans', '0', '--threads', '1'],
  ].flat();
  const highEnds = [
    ['--seed', '4294967295', '--l2', '.5', '--epochs', '100000', '--calibration', '0.5'],
    ['--unknown-below', '1.', '--synthetic-plans', '100000', '--threads', '64'],
  ].flat();
  for (const args of [lowEnds, highEnds]) {
    // Past every check, the script stops at the data folder, which does not exist.
    const result = await train(args);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /Error: ENOENT: no such file or directory, open '.*missing\/manifest\.csv'/);
    assert.doesNotMatch(result.stderr, / must be /);
  }
});
