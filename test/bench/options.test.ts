import { execFile } from 'node:child_process';
import net from 'node:net';
import { promisify } from 'node:util';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { benchArgErrors, partsToRun, unreachable, usesServer } from '../../bench/options.ts';

/** The bench's command line is checked before anything runs (bench/options.ts). */

const SERVER = 'postgres://postgres@127.0.0.1:5432/test';

test('well-formed options have no errors', () => {
  assert.deepEqual(benchArgErrors({}, undefined), []);
  assert.deepEqual(
    benchArgErrors({ only: 'ingestion', repeats: '5', 'pooled-url': 'postgres://h:6440/test' }, SERVER),
    [],
  );
  assert.deepEqual(
    benchArgErrors({ only: 'import', formats: 'csv,xlsx', 'import-batches': '20' }, undefined),
    [],
  );
});

test('the parts a run takes: all but the replica without --only, the preview after the ingestion', () => {
  assert.deepEqual(partsToRun(undefined), [
    'ingestion',
    'preview',
    'import',
    'export',
    'search',
    'analysis',
    'decode',
  ]);
  assert.deepEqual(partsToRun('ingestion'), ['ingestion', 'preview']);
  assert.deepEqual(partsToRun('preview'), ['preview']);
  assert.deepEqual(partsToRun('replica'), ['replica']);
  assert.deepEqual(partsToRun('decode'), ['decode']);
});

test('each malformed option is named, with what it takes', () => {
  assert.deepEqual(benchArgErrors({ only: 'ingest' }, undefined), [
    '--only takes ingestion, preview, import, export, search, analysis, decode or replica, not ingest',
  ]);
  assert.deepEqual(benchArgErrors({ repeats: '0' }, undefined), [
    '--repeats takes a whole number from 1, not 0',
  ]);
  assert.deepEqual(benchArgErrors({ repeats: 'five', 'import-batches': '2.5' }, undefined), [
    '--repeats takes a whole number from 1, not five',
    '--import-batches takes a whole number from 1, not 2.5',
  ]);
  assert.deepEqual(benchArgErrors({ formats: 'csv,xls,json' }, undefined), [
    '--formats takes jsonl, csv, xlsx or ndjson, not xls, json',
  ]);
});

test('--formats is checked against the part that takes it', () => {
  // A trailing comma names nothing more; JSONL is the import's reference.
  assert.deepEqual(benchArgErrors({ only: 'import', formats: 'jsonl,csv,' }, undefined), []);
  assert.deepEqual(benchArgErrors({ only: 'export', formats: 'jsonl' }, undefined), [
    '--formats for export takes ndjson, csv or xlsx, not jsonl',
  ]);
  assert.deepEqual(benchArgErrors({ only: 'import', formats: 'ndjson' }, undefined), [
    '--formats for import takes jsonl, csv or xlsx, not ndjson',
  ]);
  assert.deepEqual(benchArgErrors({ only: 'search', formats: 'csv' }, undefined), [
    '--formats is for the import and export parts, which --only search leaves out',
  ]);
});

test('only the parts that use the server ask it for SELECT 1', () => {
  for (const only of [undefined, 'ingestion', 'preview', 'import', 'export', 'search']) {
    assert.equal(usesServer(only), true, String(only));
  }
  for (const only of ['replica', 'analysis', 'decode']) assert.equal(usesServer(only), false, only);
});

test('a pooled URL needs a direct server and the ingestion part', () => {
  assert.deepEqual(benchArgErrors({ 'pooled-url': 'postgres://h:6440/test' }, undefined), [
    '--pooled-url needs --database-url (or DATABASE_URL): the server to compare with, directly',
  ]);
  assert.deepEqual(benchArgErrors({ 'pooled-url': 'postgres://h:6440/test', only: 'export' }, SERVER), [
    '--pooled-url is for the ingestion part, which --only export leaves out',
  ]);
});

/** A loopback port nothing listens on: one the system just gave out and took back. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a URL where nothing listens is named by its host, never with its password', async () => {
  const port = await closedPort();
  const reason = await unreachable('--pooled-url', `postgres://bench:s3cret@127.0.0.1:${port}/test`);
  assert.equal(reason, `--pooled-url: SELECT 1 failed at 127.0.0.1:${port} (ECONNREFUSED)`);
  assert.equal(
    await unreachable('--database-url', 'not a url'),
    '--database-url is not a URL (postgres://user@host:port/database)',
  );
});

test(
  'a server that answers is reachable',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL: a PostgreSQL server to ask' },
  async () => {
    assert.equal(await unreachable('--database-url', process.env.TEST_DATABASE_URL!), null);
  },
);

test(
  'a server that refuses the connection is named with its SQLSTATE, not as silent',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL: a PostgreSQL server to ask' },
  async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/bench_no_such_database';
    const where = `${url.hostname}:${url.port || '5432'}`;
    // 3D000: invalid_catalog_name, the database does not exist.
    assert.equal(
      await unreachable('--database-url', url.toString()),
      `--database-url: SELECT 1 failed at ${where} (3D000)`,
    );
  },
);

test('an unknown option stops the bench the same way, in the words of parseArgs', async () => {
  const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--repeat', '3']);
  await assert.rejects(run, (error: { code?: number; stdout?: string; stderr?: string }) => {
    assert.equal(error.code, 2);
    assert.equal(error.stdout, '');
    assert.match(error.stderr ?? '', /^bench: Unknown option '--repeat'/);
    assert.equal(error.stderr?.split('\n').length, 2, error.stderr);
    return true;
  });
});

test('the bench stops at once on a malformed option, before it builds or starts anything', async () => {
  const run = promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      'bench/run.ts',
      '--only',
      'ingestion',
      '--repeats',
      'zero',
      '--pooled-url',
      'postgres://h/x',
    ],
    { env: { ...process.env, DATABASE_URL: '' } },
  );
  await assert.rejects(run, (error: { code?: number; stdout?: string; stderr?: string }) => {
    assert.equal(error.code, 2);
    // Nothing built (scripts/build.ts writes its progress here) and no table begun.
    assert.equal(error.stdout, '');
    assert.equal(
      error.stderr,
      'bench: --repeats takes a whole number from 1, not zero\n' +
        'bench: --pooled-url needs --database-url (or DATABASE_URL): the server to compare with, directly\n',
    );
    return true;
  });
});
