/**
 * `npm run ingest` stopped by a signal sent to npm or to the client, as a supervisor, `kill` or a
 * closed terminal would send it: the client winds down as on Ctrl-C, leaves its run for `--resume`,
 * and no process of the run is left (docs/cli.md, "Stopping a run").
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunRecord } from '../../src/cli/run-state.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import {
  childPids,
  commandLine,
  ingest,
  spawnNpmIngest,
  spawnNpxIngest,
  startCliService,
  type CliRun,
  type CliService,
} from '../helpers/ingest-cli.ts';

/** 30 batches of 100, sent one at a time: far from done when the first batch's line comes. */
const ITEMS = 3000;
const FINISHING =
  'ingest: interrupted: finishing the batches already accepted and writing their errors (Ctrl-C again stops at once)';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every process under `pid`, children first found, then theirs. */
async function descendants(pid: number): Promise<number[]> {
  const found: number[] = [];
  for (let queue = [pid]; queue.length > 0;) {
    const children = await childPids(queue.shift()!);
    found.push(...children);
    queue.push(...children);
  }
  return found;
}

/** Waits (generously) until none of `pids` runs any more; answers those still running. */
async function stillRunning(pids: number[]): Promise<string[]> {
  for (let waited = 0; ; waited += 100) {
    const running = (await Promise.all(pids.map(commandLine))).filter((line) => line !== null);
    if (running.length === 0 || waited >= 10_000) return running;
    await sleep(100);
  }
}

void describe('npm run ingest stopped by SIGTERM or SIGHUP', () => {
  let service: CliService;
  before(async () => {
    // No analyzer: the client never calls it, and its model takes seconds to load.
    // A busy machine may take minutes to start it.
    service = await startCliService({ ANALYSIS_ENABLED: 'false' }, 300_000);
  });
  after(async () => {
    await service.stop();
  });

  /**
   * Runs `npm run ingest` on a file of ITEMS valid products, calls `stop` with npm's and the client's
   * pids once the first batch is done, and checks that the run stopped as an interrupted one; then
   * `--resume` completes it. Answers npm's run.
   */
  async function interruptAndResume(
    name: string,
    stop: (pids: { npm: number; client: number }) => void,
    via: 'npm run' | 'npx' = 'npm run',
  ): Promise<CliRun> {
    const tenant = `cli-${randomUUID()}`;
    const file = path.join(service.dir, `${name}.jsonl`);
    const lines = Array.from({ length: ITEMS }, () => JSON.stringify(product()));
    await fs.writeFile(file, `${lines.join('\n')}\n`);
    const env = { AUTH_JWT_SECRET: service.secret };
    const args = [file, '--url', service.url, '--tenant', tenant, '--batch-size', '100'];

    const cli = (via === 'npx' ? spawnNpxIngest : spawnNpmIngest)([...args, '--concurrency', '1'], env);
    const firstBatch = new Promise<void>((resolve) => {
      const seen = () => {
        if (!/^batch 1 /m.test(cli.stderr())) return;
        cli.child.stderr.off('data', seen);
        resolve();
      };
      cli.child.stderr.on('data', seen);
    });
    const early = await Promise.race([firstBatch.then(() => null), cli.done]);
    assert.equal(early, null, `npm ended before the first batch: ${JSON.stringify(early)}`);

    const npm = cli.child.pid!;
    const processes = [npm, ...(await descendants(npm))];
    let client: number;
    if (via === 'npm run') {
      // `exec` in the package script: npm's one child is the client itself (which may have started
      // esbuild, tsx's compiler, as a child of its own).
      const children = await childPids(npm);
      assert.equal(children.length, 1, `npm's children: ${children.join(', ')}`);
      client = children[0]!;
      assert.match((await commandLine(client)) ?? '', /node --import tsx src\/cli\/ingest-file\.ts /);
    } else {
      // npx runs the bin through `sh -c`, which does not exec it: the client is npx's grandchild.
      const [shell, ...others] = await childPids(npm);
      assert.deepEqual(others, []);
      assert.match((await commandLine(shell!)) ?? '', /^sh -c /);
      client = (await childPids(shell!))[0]!;
      assert.match((await commandLine(client)) ?? '', /node .*catalog-ingest /);
    }

    stop({ npm, client });
    const run = await cli.done;

    const output = run.stderr.trim().split('\n');
    assert.equal(output.filter((line) => line === FINISHING).length, 1, run.stderr);
    assert.equal(output.at(-3), 'ingest: interrupted', run.stderr);
    const summary =
      /^stopped: (\d+) items read, (\d+) submitted, (\d+) upserted, 0 failed, 0 replayed, \d+\.\d s$/.exec(
        output.at(-1)!,
      );
    assert.ok(summary, run.stderr);
    const submitted = Number(summary[2]);
    assert.equal(Number(summary[3]), submitted);
    assert.ok(submitted >= 100 && submitted < ITEMS, `${submitted} items submitted`);
    assert.deepEqual(await stillRunning(processes), []);

    const state = JSON.parse(await fs.readFile(`${file}.ingest-run.json`, 'utf8')) as RunRecord;
    assert.equal(state.finished_at, null);
    assert.equal(state.batches, ITEMS / 100);

    const resumed = await ingest([...args, '--resume', '--quiet'], env);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(
      resumed.stderr,
      new RegExp(
        `^${ITEMS} items: ${ITEMS - submitted} upserted, 0 failed, ${submitted} replayed, \\d+\\.\\d s\\n$`,
      ),
    );
    assert.equal((await service.allProducts(tenant)).length, ITEMS);
    const finished = JSON.parse(await fs.readFile(`${file}.ingest-run.json`, 'utf8')) as RunRecord;
    assert.equal(finished.run_id, state.run_id);
    assert.notEqual(finished.finished_at, null);
    return run;
  }

  void test('SIGTERM to npm reaches the client, and npm exits with its code, 130', async () => {
    const run = await interruptAndResume('term-npm', ({ npm }) => process.kill(npm, 'SIGTERM'));
    assert.deepEqual([run.code, run.signal], [130, null]);
  });

  void test('SIGHUP to the client stops it as Ctrl-C does; npm exits with its code, 130', async () => {
    const run = await interruptAndResume('hup-client', ({ client }) => process.kill(client, 'SIGHUP'));
    assert.deepEqual([run.code, run.signal], [130, null]);
  });

  void test('SIGHUP to npm, which npm does not forward, ends npm; the client notices and stops', async () => {
    const run = await interruptAndResume('hup-npm', ({ npm }) => process.kill(npm, 'SIGHUP'));
    assert.deepEqual([run.code, run.signal], [null, 'SIGHUP']);
  });

  void test('SIGTERM to npx, whose shell does not exec the bin, ends npx; the client notices and stops', async () => {
    const run = await interruptAndResume('term-npx', ({ npm }) => process.kill(npm, 'SIGTERM'), 'npx');
    // npx re-sends the signal that ended its shell to itself.
    assert.deepEqual([run.code, run.signal], [null, 'SIGTERM']);
  });
});
