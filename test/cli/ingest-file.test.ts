import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ingest, readErrorLines, startCliService, type CliService } from '../helpers/ingest-cli.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';

/** A loopback port nothing listens on: bound by the system, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

void describe('npm run ingest against a running service', () => {
  let service: CliService;
  let dir: string;
  let url: string;
  let secret: string;

  before(async () => {
    service = await startCliService();
    ({ dir, url, secret } = service);
  });

  after(async () => {
    await service.stop();
  });

  void test('a JSONL file of 2,500 items with 3 invalid items and 1 malformed line: exit 2, exact counts and errors', async () => {
    const tenant = `cli-${randomUUID()}`;
    const file = path.join(dir, 'catalog.jsonl');
    const invalid: Record<number, Record<string, unknown>> = {
      7: product({ style: 'modern' }),
      1234: product({ variants: [variant({ item_url: 'http://shop.example/x' })] }),
      2499: product({ variants: undefined }),
    };
    const lines: string[] = [];
    for (let position = 0; position < 2500; position++) {
      if (position === 1800) lines.push('{"external_id": "broken",');
      else lines.push(JSON.stringify(invalid[position] ?? product()));
      if (position === 100) lines.push(''); // a blank line is no item: positions and lines part here
    }
    await fs.writeFile(file, `${lines.join('\n')}\n`);

    const run = await ingest([file, '--url', url, '--tenant', tenant], { AUTH_JWT_SECRET: secret });

    assert.equal(run.code, 2, run.stderr);
    const errorsPath = `${file}.errors.jsonl`;
    const output = run.stderr.trim().split('\n');
    assert.match(
      output.at(-1)!,
      new RegExp(
        `^2500 items: 2496 upserted, 4 failed, 0 replayed \\(errors in ${errorsPath.replace(/\./g, '\\.')}\\), \\d+\\.\\d s$`,
      ),
    );
    // A line per batch, in batch order, naming the positions it holds (a blank line is no item);
    // `of 3` once the file was read to its end, which depends on timing.
    assert.deepEqual(
      output
        .filter((line) => line.startsWith('batch '))
        .map((line) =>
          /^batch (\d)(?: of 3)? (\(positions [^)]+\)) \S+ completed(?:_with_errors)?: read \d+, /
            .exec(line)
            ?.slice(1, 3)
            .join(' '),
        ),
      ['1 (positions 0–999)', '2 (positions 1000–1799, 1801–2000)', '3 (positions 2001–2499)'],
    );
    const errorLines = await readErrorLines(errorsPath);
    assert.equal(errorLines.length, 4);
    errorLines.sort((a, b) => a.position - b.position);
    assert.deepEqual(
      errorLines.map((l) => [l.position, l.line, l.index, l.external_id, l.errors.map((e) => e.code)]),
      [
        [7, undefined, 7, invalid[7]!.external_id, ['invalid_value']],
        [1234, undefined, 234, invalid[1234]!.external_id, ['https_required']],
        [1800, 1802, null, null, ['malformed_json']],
        // The malformed line is not sent, so the last batch starts at position 2001.
        [2499, undefined, 498, invalid[2499]!.external_id, ['required']],
      ],
    );
    assert.equal(errorLines[1]!.sku, (invalid[1234]!.variants as Array<{ sku: string }>)[0]!.sku);
    assert.match(errorLines[2]!.errors[0]!.message, /^The item at line 1802 is not valid JSON: /);
    assert.equal(new Set(errorLines.filter((l) => l.batch_id).map((l) => l.batch_id)).size, 3);
    assert.equal((await service.allProducts(tenant)).length, 2496);
  });

  void test('a JSON array file of 1,200 valid items: exit 0, and no errors file', async () => {
    const tenant = `cli-${randomUUID()}`;
    const file = path.join(dir, 'catalog.json');
    const items = Array.from({ length: 1200 }, () => product({ variants: [variant({ price: 19.9 })] }));
    await fs.writeFile(file, JSON.stringify(items, null, 2));
    const token = await service.token(tenant, 'ingestions:write ingestions:read');

    const run = await ingest([file, '--url', url, '--quiet', '--batch-size', '500', '--concurrency', '3'], {
      INGEST_TOKEN: token,
    });

    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^1200 items: 1200 upserted, 0 failed, 0 replayed, \d+\.\d s\n$/);
    await assert.rejects(fs.stat(`${file}.errors.jsonl`), { code: 'ENOENT' });
    const products = await service.allProducts(tenant);
    assert.equal(products.length, 1200);
    const stored = products.find((p) => p.external_id === items[0]!.external_id) as {
      variants: Array<{ price: number }>;
    };
    assert.equal(stored.variants[0]!.price, 19.9);
  });

  void test('a bad token: exit 1 with a clear message, nothing submitted', async () => {
    const file = path.join(dir, 'small.jsonl');
    await fs.writeFile(file, `${JSON.stringify(product())}\n`);
    const run = await ingest([file, '--url', url], { INGEST_TOKEN: 'not-a-jwt' });
    assert.equal(run.code, 1);
    assert.equal(
      run.stderr.split('\n').slice(0, 2).join('\n'),
      'ingest: the service refused the token: 401 The bearer token is malformed.\nNo item was submitted.',
    );
  });

  void test('--token works but warns on stderr that it shows the token; INGEST_TOKEN does not warn', async () => {
    const tenant = `cli-${randomUUID()}`;
    const token = await service.token(tenant, 'ingestions:write ingestions:read');
    const file = path.join(dir, 'warn.jsonl');
    await fs.writeFile(file, `${JSON.stringify(product())}\n`);
    const flagged = await ingest([file, '--url', url, '--token', token, '--quiet']);
    assert.equal(flagged.code, 0, flagged.stderr);
    assert.equal(
      flagged.stderr.split('\n')[0],
      'ingest: warning: --token puts the token on the command line, where npm run echoes it (unless -s) ' +
        'and ps shows it; prefer INGEST_TOKEN=… npm run -s ingest -- …',
    );
    assert.doesNotMatch(flagged.stderr, new RegExp(token.replace(/\./g, '\\.')));
    const fromEnv = await ingest([file, '--url', url, '--quiet'], { INGEST_TOKEN: token });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.match(fromEnv.stderr, /^1 item: 1 upserted, 0 failed, 0 replayed, \d+\.\d s\n$/);
  });

  void test('nothing listening at --url on the first request: exit 1 at once, with a hint about --url', async () => {
    const file = path.join(dir, 'nowhere.jsonl');
    await fs.writeFile(file, `${JSON.stringify(product())}\n`);
    const closed = await closedPort();
    const refused =
      `ingest: cannot reach http://127.0.0.1:${closed}: ECONNREFUSED (is the service running there? ` +
      'Give its address with --url or INGEST_URL (default http://127.0.0.1:3000))';
    // A run, a dry run, and the address given by INGEST_URL instead of --url: the same answer.
    for (const [args, env] of [
      [['--url', `http://127.0.0.1:${closed}`], {}],
      [['--url', `http://127.0.0.1:${closed}`, '--dry-run'], {}],
      [[], { INGEST_URL: `http://127.0.0.1:${closed}` }],
    ] as const) {
      const started = performance.now();
      const run = await ingest([file, ...args], { INGEST_TOKEN: 't', ...env });
      const seconds = (performance.now() - started) / 1000;
      assert.equal(run.code, 1, run.stderr);
      assert.equal(run.stderr.split('\n')[0], refused, args.join(' '));
      assert.doesNotMatch(run.stderr, /retrying/);
      // Retrying would take over 60 s; a fresh process with tsx takes a few.
      assert.ok(seconds < 10, `took ${seconds.toFixed(1)} s`);
    }
  });

  void test('bad arguments: exit 1 with the usage', async () => {
    const run = await ingest(['missing.jsonl', '--url', url, '--token', 't']);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /^ingest: no such file: missing\.jsonl\nusage: npm run ingest -- <file> \[options\]/,
    );
    const size = await ingest([path.join(dir, 'small.jsonl'), '--batch-size', '1001', '--token', 't']);
    assert.equal(size.code, 1);
    assert.match(size.stderr, /^ingest: --batch-size must be an integer from 1 to 1000\n/);
  });

  void test('a --url the requests cannot be built on is refused before anything is sent: exit 1', async () => {
    const file = path.join(dir, 'url.jsonl');
    await fs.writeFile(file, `${JSON.stringify(product())}\n`);
    const port = new URL(url).port;
    const refusals: Array<[string, string]> = [
      [
        `http://user:s3cret@127.0.0.1:${port}`,
        'must not hold a user name or password; give the token with --token',
      ],
      [`http://127.0.0.1:${port}/?x=1`, 'must not hold a query or fragment'],
      [`http://127.0.0.1:${port}#top`, 'must not hold a query or fragment'],
      [`ftp://127.0.0.1:${port}`, 'must be an http(s) URL'],
      ['127.0.0.1', 'must be an http(s) URL'],
    ];
    for (const [bad, reason] of refusals) {
      const run = await ingest([file, '--url', bad, '--token', 't', '--quiet']);
      assert.equal(run.code, 1, bad);
      assert.equal(run.stderr.split('\n')[0], `ingest: --url ${reason}`, bad);
      assert.doesNotMatch(run.stderr, /s3cret/);
    }
    // An address from INGEST_URL is checked the same way, and the refusal names the variable.
    const fromEnv = await ingest([file, '--token', 't', '--quiet'], {
      INGEST_URL: `ftp://127.0.0.1:${port}`,
    });
    assert.equal(fromEnv.code, 1);
    assert.equal(fromEnv.stderr.split('\n')[0], 'ingest: INGEST_URL must be an http(s) URL');
  });

  void test('a --url scheme in capitals, with a trailing slash, reaches the service', async () => {
    const tenant = `cli-${randomUUID()}`;
    const file = path.join(dir, 'upper.jsonl');
    await fs.writeFile(file, `${JSON.stringify(product())}\n`);
    const run = await ingest(
      [file, '--url', `${url.replace(/^http/, 'HTTP')}/`, '--tenant', tenant, '--quiet'],
      {
        AUTH_JWT_SECRET: secret,
      },
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /^1 item: 1 upserted, 0 failed, 0 replayed, \d+\.\d s\n$/);
  });
});
