/** `npm run eval` refuses a bad folder or option before it loads the model. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

const script = path.resolve(import.meta.dirname, '../../scripts/eval-analyzer.ts');

function runEval(argv: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', script, ...argv], (error, _stdout, stderr) => {
      resolve({ code: error ? (error.code as number) : 0, stderr });
    });
  });
}

void test('a thread count that is not a whole number from 1 to 64 stops the run', async () => {
  for (const threads of ['two', '0', '1.5']) {
    // The folder does not exist: a check made after reading the manifest would fail on that instead.
    const { code, stderr } = await runEval(['/nonexistent/photos', '--threads', threads]);
    assert.equal(code, 1);
    assert.ok(
      stderr.includes(`Error: --threads must be a whole number from 1 to 64, not ${threads}\n`),
      stderr,
    );
    assert.doesNotMatch(stderr, /manifest/);
  }
});

void test('a folder without manifest.csv: one line saying what is needed, exit code 2', async () => {
  const { code, stderr } = await runEval(['/nonexistent/photos']);
  assert.equal(code, 2);
  assert.equal(
    stderr,
    'eval: no labelled photos in /nonexistent/photos: npm run eval -- DIR [--head file] [--threads n] [--verbose], ' +
      'DIR holding the photos and a manifest.csv with columns file,label[,empty_room]; ' +
      'docs/analyzer-model.md#the-photos says where to get them\n',
  );
});

void test('without a folder: the same line, exit code 2', async () => {
  const { code, stderr } = await runEval([]);
  assert.equal(code, 2);
  assert.equal(
    stderr,
    'eval: no folder given: npm run eval -- DIR [--head file] [--threads n] [--verbose], ' +
      'DIR holding the photos and a manifest.csv with columns file,label[,empty_room]; ' +
      'docs/analyzer-model.md#the-photos says where to get them\n',
  );
});
