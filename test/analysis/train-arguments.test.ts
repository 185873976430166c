/** `npm run train` refuses bad options before it reads a photo or writes a head. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

const SCRIPT = path.resolve(import.meta.dirname, '../../scripts/train-room-classifier.ts');

/** Runs the training script with `args` and a data folder that does not exist. */
async function train(args: string[]): Promise<{ code: number | null; stderr: string; wrote: boolean }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'train-args-'));
  const out = path.join(dir, 'head.json');
  try {
    const argv = ['--import', 'tsx', SCRIPT, '--data', path.join(dir, 'missing'), '--out', out, ...args];
    return await new Promise((resolve) => {
      execFile(process.execPath, argv, (error, _stdout, stderr) => {
        resolve({ code: error ? (error.code as number) : 0, stderr, wrote: existsSync(out) });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

void test('train refuses an input side that is not a plain multiple of 32 in range', async () => {
  for (const side of ['0x200', '500', '96', '800', '512.0', '']) {
    const result = await train(['--input-size', side]);
    assert.equal(result.code, 1, side);
    assert.match(
      result.stderr,
      new RegExp(
        `Error: --input-size must be a multiple of 32 from 128 to 768, not ${side.replace('.', '\\.')}\\n`,
      ),
      side,
    );
    assert.equal(result.wrote, false, side);
  }
});

void test('train refuses an unknown feature block by name', async () => {
  const result = await train(['--blocks', 'headMean,colour']);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /Error: unknown feature block "colour" \(known: headMean, /);
  assert.equal(result.wrote, false);
});
