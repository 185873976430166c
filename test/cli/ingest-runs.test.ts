import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { product } from '../helpers/catalog-fixtures.ts';
import { ingest, readErrorLines, spawnCli, startCliService, type CliService } from '../helpers/ingest-cli.ts';
import type { RunRecord } from '../../src/cli/run-state.ts';

/** `npm run ingest` runs (docs/reference.md §11.6): run ids, the state file, --resume, replays, labels (§11.1). */

let service: CliService;
before(async () => {
  service = await startCliService();
});
after(async () => {
  await service?.stop();
});

interface Listed {
  batch_id: string;
  label?: string;
}

/** The tenant's batches, newest first, from the service's list (every page). */
async function batches(tenant: string, query = ''): Promise<Listed[]> {
  const token = await service.token(tenant, 'ingestions:read');
  const out: Listed[] = [];
  let cursor: string | null = null;
  do {
    const page: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await fetch(`${service.url}/products/ingestions?limit=100${query}${page}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { data: Listed[]; next_cursor: string | null };
    out.push(...body.data.map(({ batch_id, label }) => ({ batch_id, label })));
    cursor = body.next_cursor;
  } while (cursor !== null);
  return out;
}

/** The labels of the tenant's batches, sorted. */
const labelsOf = async (tenant: string, query = '') =>
  (await batches(tenant, query)).map((batch) => batch.label).sort();

async function writeLines(name: string, items: unknown[]): Promise<string> {
  const folder = path.join(service.dir, randomUUID());
  await fs.mkdir(folder);
  const file = path.join(folder, name);
  await fs.writeFile(file, `${items.map((item) => JSON.stringify(item)).join('\n')}\n`);
  return file;
}

const env = () => ({ AUTH_JWT_SECRET: service.secret });
const args = (file: string, tenant: string, ...more: string[]) => [
  file,
  '--url',
  service.url,
  '--tenant',
  tenant,
  ...more,
];
const run = (file: string, tenant: string, ...more: string[]) => ingest(args(file, tenant, ...more), env());

const lastLine = (stderr: string) => stderr.trimEnd().split('\n').at(-1)!;
/** The closing line's counts, checked against its exact form. */
function closing(stderr: string): { n: number; u: number; f: number; r: number } {
  const match =
    /^(\d+) items?: (\d+) upserted, (\d+) failed, (\d+) replayed(?: \(errors in .+\))?, \d+\.\d s$/.exec(
      lastLine(stderr),
    );
  assert.ok(match, stderr);
  const [n, u, f, r] = match.slice(1, 5).map(Number) as [number, number, number, number];
  assert.equal(u + f + r, n);
  return { n, u, f, r };
}

const readState = async (file: string) =>
  JSON.parse(await fs.readFile(`${file}.ingest-run.json`, 'utf8')) as RunRecord;

/** The catalog's product names by external_id. */
async function namesOf(tenant: string): Promise<Map<unknown, unknown>> {
  return new Map((await service.allProducts(tenant)).map((p) => [p.external_id, p.name]));
}

describe('runs, labels and a plain rerun', () => {
  test('a rerun is a new run that applies the file again and restores its values; batches are labelled by file name', async () => {
    const tenant = `cli-runs-${randomUUID()}`;
    const items = Array.from({ length: 5 }, () => product());
    const file = await writeLines('catalog.jsonl', items);
    const first = await run(file, tenant, '--batch-size', '2');
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(closing(first.stderr), { n: 5, u: 5, f: 0, r: 0 });
    const firstRun = await readState(file);
    assert.deepEqual(
      { ...firstRun, run_id: typeof firstRun.run_id, fingerprint: typeof firstRun.fingerprint },
      {
        version: 1,
        run_id: 'string',
        file,
        fingerprint: 'string',
        batch_size: 2,
        format: 'jsonl',
        label: 'catalog.jsonl',
        batches: 3,
        started_at: firstRun.started_at,
        finished_at: firstRun.finished_at,
      },
    );
    assert.match(firstRun.run_id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(Date.parse(firstRun.started_at) <= Date.parse(firstRun.finished_at!));
    assert.deepEqual(await labelsOf(tenant), ['catalog.jsonl 1/3', 'catalog.jsonl 2/3', 'catalog.jsonl 3/3']);
    assert.ok(firstRun.finished_at !== null);

    // Another change to the catalog, then the original file again: applied, not replayed.
    const renamed = await writeLines(
      'renamed.jsonl',
      items.map((item) => ({ ...item, name: 'Renamed' })),
    );
    assert.equal((await run(renamed, tenant, '--label', 'hotfix')).code, 0);
    assert.deepEqual(new Set((await namesOf(tenant)).values()), new Set(['Renamed']));
    const again = await run(file, tenant, '--batch-size', '2');
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(closing(again.stderr), { n: 5, u: 5, f: 0, r: 0 });
    assert.doesNotMatch(again.stderr, /replayed [^0]|replayed$/m);
    assert.deepEqual(new Set((await namesOf(tenant)).values()), new Set(['Linen sofa']));
    assert.notEqual((await readState(file)).run_id, firstRun.run_id);
    assert.equal((await batches(tenant)).length, 3 + 1 + 3);
    assert.deepEqual(await labelsOf(tenant, '&label=hotfix'), ['hotfix 1/1']);
    assert.deepEqual(await labelsOf(tenant, '&label=catalog.jsonl%203'), [
      'catalog.jsonl 3/3',
      'catalog.jsonl 3/3',
    ]);
  });

  test('standard input is labelled "stdin <k>/?", since its batches cannot be counted first, and has no state', async () => {
    const tenant = `cli-stdin-${randomUUID()}`;
    const lines = Array.from({ length: 3 }, () => JSON.stringify(product())).join('\n');
    const errors = path.join(service.dir, `${randomUUID()}.errors.jsonl`);
    const res = await ingest(
      [
        '-',
        '--url',
        service.url,
        '--tenant',
        tenant,
        '--format',
        'jsonl',
        '--errors',
        errors,
        '--batch-size',
        '2',
      ],
      env(),
      lines,
    );
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual(closing(res.stderr), { n: 3, u: 3, f: 0, r: 0 });
    assert.deepEqual(await labelsOf(tenant), ['stdin 1/?', 'stdin 2/?']);
    const resumed = await ingest(
      ['-', '--url', service.url, '--tenant', tenant, '--format', 'jsonl', '--errors', errors, '--resume'],
      env(),
      lines,
    );
    assert.equal(resumed.code, 1);
    assert.match(
      resumed.stderr,
      /^ingest: --resume and --state need a regular file: standard input cannot be read twice$/m,
    );
  });

  test('--label must be 1–180 characters without control characters; --fresh is gone', async () => {
    const file = await writeLines('x.jsonl', [product()]);
    const tenant = `cli-badlabel-${randomUUID()}`;
    for (const [label, why] of [
      ['', '--label must not be empty'],
      ['a\tb', '--label must not hold control characters'],
      ['x'.repeat(181), '--label must be at most 180 characters (it has 181)'],
    ] as const) {
      const res = await run(file, tenant, '--label', label);
      assert.equal(res.code, 1);
      assert.equal(res.stderr.split('\n')[0], `ingest: ${why}`);
    }
    const fresh = await run(file, tenant, '--fresh');
    assert.equal(fresh.code, 1);
    assert.match(
      fresh.stderr,
      /^ingest: --fresh is gone: every run applies the file again; --resume continues an unfinished one$/m,
    );
    assert.deepEqual(await batches(tenant), []);
  });
});

describe('--resume', () => {
  test('a run killed after its first batch and resumed stores nothing twice; a plain rerun after another change restores the file', async () => {
    const tenant = `cli-resume-${randomUUID()}`;
    const total = 600;
    const isInvalid = (position: number) => position % 50 === 7;
    const items = Array.from({ length: total }, (_, position) =>
      isInvalid(position) ? product({ style: 'modern' }) : product(),
    );
    const file = await writeLines('big.jsonl', items);
    const cli = spawnCli(
      'src/cli/ingest-file.ts',
      args(file, tenant, '--batch-size', '100', '--concurrency', '1', '--label', 'spring'),
      env(),
    );
    await new Promise<void>((resolve) => {
      const seen = () => {
        if (!/^batch 1 /m.test(cli.stderr())) return;
        cli.child.stderr.off('data', seen);
        resolve();
      };
      cli.child.stderr.on('data', seen);
    });
    cli.child.kill('SIGKILL');
    await cli.done;
    const killed = await readState(file);
    assert.equal(killed.finished_at, null);
    const storedBefore = await batches(tenant);
    assert.ok(storedBefore.length >= 1 && storedBefore.length < 6, `${storedBefore.length} batches before`);

    const resumed = await run(file, tenant, '--resume');
    assert.equal(resumed.code, 2, resumed.stderr);
    assert.match(
      resumed.stderr,
      new RegExp(`^ingest: resuming run ${killed.run_id} \\(begun ${killed.started_at}\\)`, 'm'),
    );
    const { n, u, f, r } = closing(resumed.stderr);
    assert.equal(n, total);
    // Every batch stored before the kill was replayed, whole; the others were stored now.
    assert.equal(r, storedBefore.length * 100);
    const replayedLines = resumed.stderr
      .split('\n')
      .filter((line) => /^batch \d+ of 6 .* replayed: /.test(line));
    assert.equal(replayedLines.length, storedBefore.length);
    for (const line of resumed.stderr.split('\n').filter((l) => l.startsWith('batch '))) {
      const id = /of 6 \(positions [^)]+\) (\S+)/.exec(line)![1]!;
      assert.equal(
        line.includes(' replayed: '),
        storedBefore.some((b) => b.batch_id === id),
        line,
      );
    }
    const invalidSent = items.map((_, p) => p).filter(isInvalid);
    const invalidNow = invalidSent.filter((p) => p >= storedBefore.length * 100);
    assert.equal(f, invalidNow.length);
    assert.equal(u, total - r - f);
    // The errors file lists every failed item of the file, the replayed batches' included.
    assert.deepEqual(
      (await readErrorLines(`${file}.errors.jsonl`)).map((line) => line.position).sort((a, b) => a - b),
      invalidSent,
    );
    // Nothing stored twice: one batch per label, the ones stored before kept.
    const after = await batches(tenant);
    assert.deepEqual(
      after.map((b) => b.label).sort(),
      Array.from({ length: 6 }, (_, k) => `spring ${k + 1}/6`),
    );
    for (const before of storedBefore) assert.ok(after.some((b) => b.batch_id === before.batch_id));
    assert.equal((await service.allProducts(tenant)).length, total - invalidSent.length);
    assert.ok((await readState(file)).finished_at !== null);

    // Finished: nothing to resume.
    const nothing = await run(file, tenant, '--resume');
    assert.equal(nothing.code, 1);
    assert.equal(
      nothing.stderr,
      `ingest: --resume: the last run ${killed.run_id} (begun ${killed.started_at}) finished at ${(await readState(file)).finished_at}: nothing to resume; run without --resume to apply the file as a new run\n`,
    );

    // Another change, then a plain rerun: the file's values again, nothing replayed.
    const valid = items.filter((_, p) => !isInvalid(p));
    const changed = await writeLines(
      'change.jsonl',
      valid.slice(0, 150).map((item) => ({ ...item, name: 'Changed' })),
    );
    assert.equal((await run(changed, tenant)).code, 0);
    const rerun = await run(file, tenant, '--batch-size', '100');
    assert.equal(rerun.code, 2, rerun.stderr);
    assert.deepEqual(closing(rerun.stderr), { n: total, u: valid.length, f: invalidSent.length, r: 0 });
    assert.deepEqual(new Set((await namesOf(tenant)).values()), new Set(['Linen sofa']));
    assert.equal((await batches(tenant)).length, 6 + 1 + 6);
  });

  test('refused, sending nothing: no run recorded, the file changed, options that differ, a run over 24 hours old', async () => {
    const tenant = `cli-refuse-${randomUUID()}`;
    const items = Array.from({ length: 4 }, () => product());
    const file = await writeLines('feed.jsonl', items);
    const statePath = `${file}.ingest-run.json`;
    const none = await run(file, tenant, '--resume');
    assert.equal(none.code, 1);
    assert.equal(
      none.stderr,
      `ingest: --resume: no run of this file is recorded in ${statePath}; run without --resume to apply the file as a new run\n`,
    );

    // An unfinished run, as a killed one leaves it.
    assert.equal((await run(file, tenant, '--batch-size', '2')).code, 0);
    const record = await readState(file);
    await fs.writeFile(statePath, JSON.stringify({ ...record, finished_at: null }));
    const stored = await batches(tenant);

    const otherSize = await run(file, tenant, '--resume', '--batch-size', '3');
    assert.equal(otherSize.code, 1);
    assert.equal(
      otherSize.stderr.split('\n')[0],
      `ingest: --resume continues run ${record.run_id} as it began, with --batch-size 2; leave these options out`,
    );

    await fs.writeFile(file, `${[...items, product()].map((item) => JSON.stringify(item)).join('\n')}\n`);
    const changed = await run(file, tenant, '--resume');
    assert.equal(changed.code, 1);
    assert.equal(
      changed.stderr,
      `ingest: --resume: the file changed since run ${record.run_id} (begun ${record.started_at}): its batches are no longer the ones that run sent, and their keys would name other batches; run without --resume to apply the file as a new run\n`,
    );

    const old = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
    await fs.writeFile(statePath, JSON.stringify({ ...record, finished_at: null, started_at: old }));
    const stale = await run(file, tenant, '--resume');
    assert.equal(stale.code, 1);
    assert.match(
      stale.stderr,
      /began more than 24 hours ago, and the service remembers its Idempotency-Keys for 24 hours only/,
    );
    assert.deepEqual(await batches(tenant), stored);

    await fs.writeFile(statePath, 'not json');
    const corrupt = await run(file, tenant, '--resume');
    assert.equal(corrupt.code, 1);
    assert.equal(
      corrupt.stderr,
      `ingest: the state file ${statePath} does not hold a run of this client; remove it or give --state\n`,
    );
    assert.deepEqual(await batches(tenant), stored);
  });

  test('--state puts the record elsewhere; a plain run over an unfinished one is a new run', async () => {
    const tenant = `cli-state-${randomUUID()}`;
    const file = await writeLines('s.jsonl', [product()]);
    const statePath = path.join(path.dirname(file), 'elsewhere.json');
    assert.equal((await run(file, tenant, '--state', statePath)).code, 0);
    const record = JSON.parse(await fs.readFile(statePath, 'utf8')) as RunRecord;
    await assert.rejects(fs.stat(`${file}.ingest-run.json`));
    await fs.writeFile(statePath, JSON.stringify({ ...record, finished_at: null }));
    const resumed = await run(file, tenant, '--state', statePath, '--resume');
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(closing(resumed.stderr), { n: 1, u: 0, f: 0, r: 1 });
    assert.match(resumed.stderr, /^batch 1 of 1 \(positions 0\) \S+ completed replayed: /m);

    // A plain run over an unfinished one is a new run: it applies the file again, and replaces the record.
    await fs.writeFile(statePath, JSON.stringify({ ...record, finished_at: null }));
    const plain = await run(file, tenant, '--state', statePath);
    assert.equal(plain.code, 0, plain.stderr);
    assert.deepEqual(closing(plain.stderr), { n: 1, u: 1, f: 0, r: 0 });
    assert.equal((await batches(tenant)).length, 2);
    assert.notEqual((JSON.parse(await fs.readFile(statePath, 'utf8')) as RunRecord).run_id, record.run_id);
  });
});
