import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { ingest, readErrorLines, startCliService, type CliService } from '../helpers/ingest-cli.ts';
import { product } from '../helpers/catalog-fixtures.ts';

const run = promisify(execFile);

void describe('npm run ingest: the input and the errors file', () => {
  let service: CliService;
  /** A fresh tenant and the options that mint its token. */
  const tenantOptions = () => {
    const tenant = `cli-${randomUUID()}`;
    return {
      tenant,
      args: ['--url', service.url, '--tenant', tenant],
      env: { AUTH_JWT_SECRET: service.secret },
    };
  };
  /** A JSONL file of `count` valid items in the scratch folder. */
  const validFile = async (name: string, count = 2) => {
    const file = path.join(service.dir, name);
    await fs.writeFile(file, Array.from({ length: count }, () => `${JSON.stringify(product())}\n`).join(''));
    return file;
  };

  before(async () => {
    service = await startCliService();
  });
  after(async () => {
    await service.stop();
  });

  void test('- reads JSON Lines from standard input, with --format and --errors', async () => {
    const { tenant, args, env } = tenantOptions();
    const errorsPath = path.join(service.dir, 'stdin.errors.jsonl');
    const bad = product({ style: 'modern' });
    const body = [product(), bad, product()].map((item) => JSON.stringify(item)).join('\n');

    const result = await ingest(
      ['-', '--format', 'jsonl', '--errors', errorsPath, '--quiet', ...args],
      env,
      body,
    );

    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `^3 items: 2 upserted, 1 failed, 0 replayed \\(errors in ${errorsPath}\\), \\d+\\.\\d s\\n$`,
      ),
    );
    const [line, ...rest] = await readErrorLines(errorsPath);
    assert.deepEqual(rest, []);
    assert.deepEqual([line!.position, line!.index, line!.external_id], [1, 1, bad.external_id]);
    assert.equal((await service.allProducts(tenant)).length, 2);
  });

  void test('a FIFO is read like a file, given --format and --errors', async () => {
    const { tenant, args, env } = tenantOptions();
    const fifo = path.join(service.dir, 'items.fifo');
    await run('mkfifo', [fifo]);
    const items = [product(), product(), product()];
    const errorsPath = path.join(service.dir, 'fifo.errors.jsonl');

    const writing = fs.writeFile(fifo, JSON.stringify(items));
    const result = await ingest([fifo, '--format', 'json', '--errors', errorsPath, '--quiet', ...args], env);
    // Had the client not opened the FIFO, the writer would wait for a reader for ever: be one.
    const reader = await fs.open(fifo, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
    await writing;
    await reader.close();

    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^3 items: 3 upserted, 0 failed, 0 replayed, \d+\.\d s\n$/);
    await assert.rejects(fs.stat(errorsPath), { code: 'ENOENT' });
    assert.equal((await service.allProducts(tenant)).length, 3);
  });

  void test('input that is not a regular file needs --format and --errors; a directory is refused', async () => {
    const { args, env } = tenantOptions();
    const firstLine = async (runArgs: string[]) => {
      const result = await ingest([...runArgs, ...args], env);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /\nusage: npm run ingest -- <file> \[options\]\n/);
      return result.stderr.split('\n')[0];
    };
    assert.equal(await firstLine(['-']), 'ingest: reading standard input needs --format json|jsonl');
    assert.equal(
      await firstLine(['-', '--format', 'jsonl']),
      'ingest: reading standard input needs --errors <path>',
    );
    assert.equal(
      await firstLine(['/dev/null', '--format', 'jsonl']),
      'ingest: reading /dev/null, which is not a regular file, needs --errors <path>',
    );
    // A spreadsheet is read twice (checked whole, then sent): it must be a file.
    assert.equal(
      await firstLine(['-', '--format', 'csv', '--errors', '/dev/null']),
      'ingest: reading standard input as csv is not possible: a spreadsheet must be a file',
    );
    assert.equal(await firstLine([service.dir]), `ingest: ${service.dir} is a directory`);
  });

  void test('--errors naming the input, by its path, a hard link or a symlink, is refused before anything is sent', async () => {
    const { tenant, args, env } = tenantOptions();
    const file = await validFile('precious.jsonl');
    const before = await fs.readFile(file, 'utf8');
    const hardLink = path.join(service.dir, 'precious-hard.jsonl');
    const symlink = path.join(service.dir, 'precious-sym.jsonl');
    await fs.link(file, hardLink);
    await fs.symlink(file, symlink);

    for (const errorsPath of [file, hardLink, symlink]) {
      const result = await ingest([file, '--errors', errorsPath, ...args], env);
      assert.equal(result.code, 1);
      assert.equal(
        result.stderr.split('\n')[0],
        `ingest: --errors ${errorsPath} is the input ${file}: it would be overwritten with the failures`,
      );
    }
    assert.equal(await fs.readFile(file, 'utf8'), before);
    assert.equal((await service.allProducts(tenant)).length, 0);
  });

  void test('--errors naming standard error (a link to /proc/self/fd/2, like /dev/stderr): left alone, exit 0', async () => {
    const { args, env } = tenantOptions();
    const file = await validFile('clean.jsonl');
    // A link of our own, so that no version of the client can remove the system's /dev/stderr.
    const stderrLink = path.join(service.dir, 'stderr');
    await fs.symlink('/proc/self/fd/2', stderrLink);
    // Node gives a child a socket for stderr, which /proc/self/fd/2 cannot open; a shell pipe is what
    // a terminal user has (`… 2>&1 | tee log`).
    const script = '{ "$0" --import tsx src/cli/ingest-file.ts "$@" 2>&1; echo "exit $?"; } | cat';
    const { stdout } = await run(
      'sh',
      ['-c', script, process.execPath, file, '--errors', stderrLink, '--quiet', ...args],
      {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: { PATH: process.env.PATH, ...env },
      },
    );
    assert.match(stdout, /^2 items: 2 upserted, 0 failed, 0 replayed, \d+\.\d s\nexit 0\n$/);
    assert.equal(await fs.readlink(stderrLink), '/proc/self/fd/2');
  });

  void test('--errors naming a character device, or a symlink to one, leaves both in place on a clean run', async () => {
    const { args, env } = tenantOptions();
    const file = await validFile('clean-device.jsonl');
    // A null device of our own (major 1, minor 3), so the real /dev/null is never at stake.
    const device = path.join(service.dir, 'null-device');
    const link = path.join(service.dir, 'null-link');
    await run('mknod', [device, 'c', '1', '3']);
    await fs.symlink(device, link);

    for (const errorsPath of [device, link]) {
      const result = await ingest([file, '--errors', errorsPath, '--quiet', ...args], env);
      assert.equal(result.code, 0, result.stderr);
    }
    assert.equal((await fs.stat(device)).isCharacterDevice(), true);
    assert.equal((await fs.lstat(link)).isSymbolicLink(), true);
    assert.equal(await fs.readlink(link), device);
  });
});
