import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { product } from '../helpers/catalog-fixtures.ts';
import { readErrorLines, spawnCli, startCliService, type CliService } from '../helpers/ingest-cli.ts';

const ITEMS = 20_000;
/** Every 37th item is invalid, so every batch has failures to write. */
const isInvalid = (position: number) => position % 37 === 0;

/** The positions a `Not submitted: …` line names, among the file's `total`. */
function notSubmitted(line: string, total: number): Set<number> {
  const match =
    /^Not submitted: (?:positions ([\d–, ]+?))?(?: and )?(?:every item from position (\d+) on)?\.$/.exec(
      line,
    );
  assert.ok(match, line);
  const positions = new Set<number>();
  for (const range of match[1]?.split(', ') ?? []) {
    const [from, to = from] = range.split('–').map(Number);
    for (let p = from!; p <= to!; p++) positions.add(p);
  }
  for (let p = Number(match[2] ?? total); p < total; p++) positions.add(p);
  return positions;
}

void describe('npm run ingest interrupted with Ctrl-C', () => {
  let service: CliService;
  before(async () => {
    service = await startCliService();
  });
  after(async () => {
    await service.stop();
  });

  void test('finishes the accepted batches, writes their errors, names what was not submitted, exit 130', async () => {
    const tenant = `cli-${randomUUID()}`;
    const file = path.join(service.dir, 'large.jsonl');
    const lines = Array.from({ length: ITEMS }, (_, position) =>
      JSON.stringify(isInvalid(position) ? product({ style: 'modern' }) : product()),
    );
    await fs.writeFile(file, `${lines.join('\n')}\n`);
    const errorsPath = `${file}.errors.jsonl`;

    const cli = spawnCli(
      'src/cli/ingest-file.ts',
      [file, '--url', service.url, '--tenant', tenant, '--batch-size', '100', '--concurrency', '2'],
      { AUTH_JWT_SECRET: service.secret },
    );
    // The first batch's progress line: it was accepted (and finished), others are in flight.
    await new Promise<void>((resolve) => {
      const seen = () => {
        if (!/^batch 1 /m.test(cli.stderr())) return;
        cli.child.stderr.off('data', seen);
        resolve();
      };
      cli.child.stderr.on('data', seen);
    });
    cli.child.kill('SIGINT');
    const run = await cli.done;

    assert.equal(run.code, 130, run.stderr);
    const output = run.stderr.trim().split('\n');
    const notice =
      'ingest: interrupted: finishing the batches already accepted and writing their errors (Ctrl-C again stops at once)';
    assert.equal(output.filter((line) => line === notice).length, 1);
    const end = output.indexOf('ingest: interrupted');
    assert.equal(end, output.length - 3, run.stderr);
    const unsent = notSubmitted(output[end + 1]!, ITEMS);
    const summary =
      /^stopped: (\d+) items read, (\d+) submitted, (\d+) upserted, (\d+) failed, 0 replayed \(errors in (.+)\), \d+\.\d s$/.exec(
        output[end + 2]!,
      );
    assert.ok(summary, output[end + 2]);
    const [read, submitted, upserted, failed] = summary.slice(1, 5).map(Number);
    assert.equal(summary[5], errorsPath);

    // Every item not named as unsent was in an accepted batch, followed to its end.
    const sent = Array.from({ length: ITEMS }, (_, p) => p).filter((p) => !unsent.has(p));
    assert.ok(sent.length >= 100 && sent.length < ITEMS, `${sent.length} items sent`);
    assert.equal(submitted, sent.length);
    assert.ok(read! >= submitted);
    const expectedFailures = sent.filter(isInvalid);
    assert.equal(failed, expectedFailures.length);
    assert.equal(upserted, sent.length - expectedFailures.length);
    const written = (await readErrorLines(errorsPath)).map((line) => line.position).sort((a, b) => a - b);
    assert.deepEqual(written, expectedFailures);
    assert.equal((await service.allProducts(tenant)).length, upserted);
  });
});
