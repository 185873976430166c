import { randomBytes } from 'node:crypto';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { promisify } from 'node:util';
import { startScriptNodeArgs } from '../../bench/service-process.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { freePort, stopProcess, type ServiceProcess } from '../helpers/process-service.ts';
import { serviceProcessesForFile } from '../helpers/file-fixture.ts';
import { assertCounters, type StatusRecord } from '../helpers/assertions.ts';

/**
 * `npm start` runs the service compiled to JavaScript (scripts/build.ts), while every other test runs
 * the sources under tsx: this file builds a copy of its own and runs one batch through it, under
 * `npm start`'s Node.js options, worker thread included on a server (TEST_DATABASE_URL).
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const processes = serviceProcessesForFile('build-test');
// Inside the repository, so that the compiled modules find node_modules.
const outDir = path.join(ROOT, `.build-test-${randomBytes(4).toString('hex')}`);
let service: ServiceProcess | undefined;

before(async () => {
  await run(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--out-dir', outDir], {
    cwd: ROOT,
    timeout: 120_000,
  });
});

after(async () => {
  await fs.rm(outDir, { recursive: true, force: true });
});

/** Starts the compiled service, as `npm start` runs it, on this file's database. */
function spawnCompiled(env: Record<string, string> = {}): Promise<ServiceProcess> {
  return processes.start({ ANALYSIS_ENABLED: 'false', ...env }, [
    ...startScriptNodeArgs(),
    path.join(outDir, 'main.js'),
  ]);
}

void test('the build carries the files the code reads next to itself, byte for byte', async () => {
  for (const file of ['db/migrations/001_initial.sql', 'analysis/model/room-classifier.json']) {
    assert.deepEqual(
      await fs.readFile(path.join(outDir, file)),
      await fs.readFile(path.join(ROOT, 'src', file)),
    );
  }
  const stray = (await fs.readdir(outDir, { recursive: true })).filter((f) => f.endsWith('.ts'));
  assert.deepEqual(stray, []);
});

void test('the compiled service ingests a batch, serves the product and drains on SIGTERM', async () => {
  service = await spawnCompiled();
  const headers = {
    authorization: `Bearer ${await processes.token('acme')}`,
    'content-type': 'application/json',
  };
  const item = product({ name: 'Compiled sofa' });
  const submitted = await fetch(`${service.baseUrl}/products/ingestions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ items: [item, { external_id: 'no-variants' }] }),
  });
  assert.equal(submitted.status, 202, await submitted.clone().text());
  const { batch_id: batchId } = (await submitted.json()) as { batch_id: string };

  let record = {} as StatusRecord;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    const res = await fetch(`${service.baseUrl}/products/ingestions/${batchId}`, { headers });
    record = (await res.json()) as StatusRecord;
    if (record.status === 'completed_with_errors') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assertCounters(record, 'completed_with_errors', [2, 1, 1, 1, 1]);
  const stored = await fetch(`${service.baseUrl}/products/${String(item.external_id)}`, { headers });
  assert.equal(stored.status, 200);
  assert.equal(((await stored.json()) as { name: string }).name, 'Compiled sofa');

  assert.deepEqual(await stopProcess(service, 'SIGTERM', 30_000), { code: 0, signal: null });
});

void test('SIGTERM as soon as the API answers, before the worker has started, still drains: exit 0', async () => {
  // The API listens before the worker (thread) starts; a supervisor that sees it healthy may stop
  // it at once. The signal handlers are in place from the first line, so this is a drain, not a kill.
  service = await spawnCompiled({ LOG_LEVEL: 'info' });
  assert.deepEqual(await stopProcess(service, 'SIGTERM', 30_000), { code: 0, signal: null });
  // The log says the drain began, and its last line that it ended cleanly.
  const messages = service
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
  assert.ok(messages.includes('draining'), messages.join(' | '));
  assert.equal(messages.at(-1), 'stopped');
});

void test('a build from unchanged sources is skipped, and a stale one is replaced whole', async () => {
  const build = () =>
    run(process.execPath, ['--import', 'tsx', 'scripts/build.ts', '--out-dir', outDir], {
      cwd: ROOT,
      timeout: 120_000,
    });
  const stampFile = path.join(outDir, '.source-stamp');
  const stamp = await fs.readFile(stampFile, 'utf8');
  assert.match(stamp, /^[0-9a-f]{64}$/);
  const marker = path.join(outDir, 'left-by-the-test.txt');
  await fs.writeFile(marker, 'not part of any build');

  await build();
  assert.equal(await fs.readFile(marker, 'utf8'), 'not part of any build');

  // As if the sources had changed since: the output is rebuilt beside it and swapped in.
  await fs.writeFile(stampFile, 'stale');
  await build();
  await assert.rejects(fs.access(marker), { code: 'ENOENT' });
  assert.equal(await fs.readFile(stampFile, 'utf8'), stamp);
  await fs.access(path.join(outDir, 'main.js'));
  const siblings = (await fs.readdir(ROOT)).filter((name) => name.startsWith(`${path.basename(outDir)}.`));
  assert.deepEqual(siblings, []);
});

void test('SIGTERM sent to `npm start` itself reaches the service, which drains and frees its data', async () => {
  const port = await freePort();
  const ownData = await fs.mkdtemp(path.join(os.tmpdir(), 'npm-start-test-'));
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      DATA_DIR: ownData,
      AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
      ANALYSIS_ENABLED: 'false',
      NODE_ENV: 'test',
    },
    stdio: 'ignore',
    detached: true, // a group of its own, so the cleanup below reaches whatever is left
  });
  const healthz = () =>
    fetch(`http://127.0.0.1:${port}/healthz`).then(
      (res) => res.status,
      () => null,
    );
  try {
    for (const deadline = Date.now() + 90_000; (await healthz()) !== 200;) {
      assert.ok(Date.now() < deadline, 'npm start did not become healthy');
      await sleep(200);
    }
    // Only npm is signalled, as `kill <pid>` or a supervisor that started it would do. The shell that
    // runs the script does not pass signals on; the script execs node so that node receives it.
    npm.kill('SIGTERM');
    const lock = path.join(ownData, 'pglite.lock');
    for (const deadline = Date.now() + 20_000; ;) {
      const lockHeld = await fs.access(lock).then(
        () => true,
        () => false,
      );
      if (!lockHeld && (await healthz()) === null) break;
      assert.ok(Date.now() < deadline, 'the service was still running 20 s after npm got SIGTERM');
      await sleep(200);
    }
  } finally {
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // the group is gone already
    }
    await fs.rm(ownData, { recursive: true, force: true });
  }
});
