/**
 * The package's `catalog-ingest` bin (docs/cli.md): the client without npm's echo of the command
 * line, through `npx` inside the repository or by its path.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const env = { PATH: process.env.PATH, HOME: process.env.HOME, npm_config_update_notifier: 'false' };

void describe('catalog-ingest', () => {
  void test('npx --no-install catalog-ingest --help prints the usage, and npm prints nothing of its own', async () => {
    const { stdout, stderr } = await run('npx', ['--no-install', 'catalog-ingest', '--help'], {
      cwd: ROOT,
      env,
    });
    assert.match(
      stdout,
      /^usage: npm run ingest -- <file> \[options\]\n {7}npx catalog-ingest <file> \[options\]\n/,
    );
    assert.doesNotMatch(stdout, /^> /m);
    assert.equal(stderr, '');
  });

  void test('bin/catalog-ingest.js runs by its path, and its arguments reach the client', async () => {
    const failed = await run(path.join(ROOT, 'bin/catalog-ingest.js'), ['a.jsonl', 'b.jsonl'], {
      cwd: ROOT,
      env,
    }).then(
      () => assert.fail('two files were taken'),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^ingest: give exactly one file\nusage: /);
  });
});
