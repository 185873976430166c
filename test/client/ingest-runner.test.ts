import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { ErrorLine } from '../../src/client/errors-file.ts';
import { ingestFile, type IngestOutcome, type IngestRun } from '../../src/client/ingest-runner.ts';
import { createIngestionClient } from '../../src/client/ingestion-client.ts';
import { createProgress } from '../../src/client/progress.ts';
import {
  accepted,
  fakeService,
  noErrors,
  problem,
  record,
  type Answer,
  type Handler,
} from '../helpers/fake-ingestion-service.ts';
import { readErrorLines } from '../helpers/ingest-cli.ts';

/** What a run against the stand-in service did. */
interface RunResult {
  outcome: IngestOutcome;
  totals: { read: number; submitted: number; upserted: number; failed: number };
  /** The lines of the errors file, none when it was removed. */
  errorLines: ErrorLine[];
  posts: string[];
}

void describe('a run against a service that fails part way', () => {
  let dir: string;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ingest-runner-'));
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  /**
   * Runs a JSONL file of `lines` against a stand-in service answering as `handler` says, except for the
   * submissions `refuse` answers.
   */
  async function runAgainst(
    handler: Handler,
    lines: string[],
    options: Partial<Pick<IngestRun, 'batchSize' | 'concurrency' | 'signal' | 'progress'>> = {},
    refuse: (body: string) => Answer | undefined = () => undefined,
    backoffMs = [1],
  ): Promise<RunResult> {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.jsonl`);
    await fs.writeFile(file, lines.join('\n'));
    const errorsPath = `${file}.errors.jsonl`;
    const service = await fakeService((request) =>
      request.method === 'POST' ? (refuse(request.body) ?? handler(request)) : handler(request),
    );
    try {
      const outcome = await ingestFile({
        file,
        format: 'jsonl',
        errorsPath,
        batchSize: 2,
        concurrency: 1,
        client: createIngestionClient({ baseUrl: service.url, token: 'tok', backoffMs }),
        progress: createProgress(process.stderr, { quiet: true, startedAt: 0 }),
        ...options,
      });
      const { read, submitted, upserted, failed } = outcome;
      return {
        outcome,
        totals: { read, submitted, upserted, failed },
        errorLines: outcome.errorLines > 0 ? await readErrorLines(errorsPath) : [],
        posts: service.requests.filter((r) => r.method === 'POST').map((r) => r.body),
      };
    } finally {
      await service.close();
    }
  }

  void test('progress lines name their batch and its positions, and come in batch order when batches finish out of order', async () => {
    let releaseFirst = () => {};
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const written: string[] = [];
    const stream = Object.assign(new PassThrough(), { isTTY: false });
    stream.on('data', (chunk: Buffer) => written.push(chunk.toString()));
    await runAgainst(
      async ({ method, url, body }) => {
        // Named by the batch's place in the file, not by arrival: three batches are sent at once, and
        // the second and third may reach the service in either order.
        if (method === 'POST') {
          const [first] = (JSON.parse(body) as { items: Array<{ n: number }> }).items;
          return accepted(`b-${first!.n / 2 + 1}`, 2);
        }
        if (url.includes('/errors')) return noErrors;
        const id = url.split('/')[3]!;
        // Batch 1 ends last: its status is answered only once batch 3 has been read as terminal.
        if (id === 'b-1') await firstHeld;
        if (id === 'b-3') setTimeout(releaseFirst, 50);
        return record(id, 2, 0);
      },
      ['{"n":0}', '{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}'],
      { concurrency: 3, progress: createProgress(stream, { quiet: false, startedAt: 0 }) },
    );
    const lines = written.join('').trimEnd().split('\n');
    // `of 3` once the file was read to its end: by then, almost surely, but that is timing.
    assert.deepEqual(
      lines.map((line) => line.replace(/: read .*$/, '').replace(' of 3 ', ' ')),
      [
        'batch 1 (positions 0–1) b-1 completed',
        'batch 2 (positions 2–3) b-2 completed',
        'batch 3 (positions 4) b-3 completed',
      ],
    );
    // Each line's totals are those when it was printed: all three batches were done by then.
    assert.match(lines[0]!, /: read 5, submitted 5, upserted 6, failed 0, \d+ items\/s$/);
  });

  void test('maps error records to file positions, then stops and names the positions not submitted', async () => {
    let posts = 0;
    const page = (index: number, cursor: string | null) => ({
      status: 200,
      body: {
        data: [
          {
            index,
            external_id: null,
            sku: null,
            errors: [{ field: '', code: 'invalid_type', message: 'm' }],
          },
        ],
        next_cursor: cursor,
      },
    });
    // Positions 0–8; position 1 is not JSON, so batch 1 holds positions 0, 2 and batch 2 holds 3, 4.
    const result = await runAgainst(
      ({ method, url }) => {
        if (method === 'POST') return ++posts <= 2 ? accepted(`b-${posts}`, 2) : problem(503, 'down');
        if (url === '/products/ingestions/b-1') return record('b-1', 2, 0);
        if (url === '/products/ingestions/b-2') return record('b-2', 0, 2);
        if (url.startsWith('/products/ingestions/b-1/errors')) return noErrors;
        return url.includes('cursor=c1') ? page(1, null) : page(0, 'c1');
      },
      ['{"n":0}', '{oops', '{"n":2}', '{"n":3}', '{"n":4}', '5', '6', '7', '8'],
    );

    assert.equal(
      result.outcome.stopped,
      'POST /products/ingestions answered 503: down (gave up after 2 attempts)\nNot submitted: positions 5–6 and every item from position 7 on.',
    );
    // `read` counts the batch read ahead while the last ones were sent (ingest-runner.ts).
    assert.deepEqual(result.totals, { read: 9, submitted: 4, upserted: 2, failed: 3 });
    assert.deepEqual(
      result.errorLines.map((l) => [l.position, l.line, l.batch_id, l.index, l.errors[0]!.code]),
      [
        [1, 2, null, null, 'malformed_json'],
        [3, undefined, 'b-2', 0, 'invalid_type'],
        [4, undefined, 'b-2', 1, 'invalid_type'],
      ],
    );
    assert.deepEqual(result.posts, [
      '{"items":[{"n":0},{"n":2}]}',
      '{"items":[{"n":3},{"n":4}]}',
      '{"items":[5,6]}',
      '{"items":[5,6]}',
    ]);
  });

  void test('when the service dies, every reason and every accepted batch of unknown outcome is named', async () => {
    let posts = 0;
    let secondBatchRefused = () => {};
    const refused = new Promise<void>((resolve) => (secondBatchRefused = resolve));
    const result = await runAgainst(
      async ({ method }) => {
        if (method === 'POST') {
          if (++posts === 1) return accepted('b-1', 2);
          if (posts === 3) secondBatchRefused(); // its last attempt
          return problem(503, 'down');
        }
        // Batch 1's status cannot be read either, once batch 2 has failed for good.
        await refused;
        return problem(500, 'gone');
      },
      ['{"n":0}', '{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}'],
      { concurrency: 2 },
    );

    const lines = result.outcome.stopped!.split('\n');
    // The two failures happen in either order.
    assert.deepEqual(lines.slice(0, 2).sort(), [
      'GET /products/ingestions/b-1 answered 500: gone (gave up after 2 attempts)',
      'POST /products/ingestions answered 503: down (gave up after 2 attempts)',
    ]);
    assert.deepEqual(lines.slice(2), [
      'Accepted, outcome unknown: batch b-1 (positions 0–1).',
      'Not submitted: positions 2–3 and every item from position 4 on.',
    ]);
    // `read` counts the batch read ahead while the last ones were sent (ingest-runner.ts).
    assert.deepEqual(result.totals, { read: 6, submitted: 2, upserted: 0, failed: 0 });
    assert.deepEqual(result.errorLines, []);
  });

  void test('a batch refused as a whole (400, 413) is halved down to the items refused alone, which are errors', async () => {
    let batches = 0;
    const deep = [
      { field: 'items', code: 'out_of_range', message: 'JSON nesting is deeper than 64 levels.' },
    ];
    const result = await runAgainst(
      ({ method, url }) => {
        if (method === 'GET') return url.includes('/errors') ? noErrors : record(url.split('/')[3]!, 1, 0);
        return { status: 202, body: { batch_id: `b-${++batches}`, received_count: 1 } };
      },
      ['{"n":0}', '{"n":1,"huge":1}', '{"n":2}', '{"n":3,"deep":1}', '{"n":4}'],
      { batchSize: 5 },
      // Refusals by content: whatever holds "deep" is a 400 with errors[], whatever holds "huge" a 413.
      (body) =>
        body.includes('deep')
          ? problem(400, 'see errors', deep)
          : body.includes('huge')
            ? problem(413, 'Too large.')
            : undefined,
    );

    assert.deepEqual(result.posts, [
      '{"items":[{"n":0},{"n":1,"huge":1},{"n":2},{"n":3,"deep":1},{"n":4}]}',
      '{"items":[{"n":0},{"n":1,"huge":1},{"n":2}]}',
      '{"items":[{"n":0},{"n":1,"huge":1}]}',
      '{"items":[{"n":0}]}',
      '{"items":[{"n":1,"huge":1}]}',
      '{"items":[{"n":2}]}',
      '{"items":[{"n":3,"deep":1},{"n":4}]}',
      '{"items":[{"n":3,"deep":1}]}',
      '{"items":[{"n":4}]}',
    ]);
    assert.equal(result.outcome.stopped, undefined);
    assert.deepEqual(result.totals, { read: 5, submitted: 3, upserted: 3, failed: 2 });
    const alone = { batch_id: null, index: null, external_id: null, sku: null };
    assert.deepEqual(result.errorLines, [
      {
        position: 1,
        ...alone,
        errors: [
          {
            field: '',
            code: 'payload_too_large',
            message: 'The item alone is larger than the service accepts: 413 Too large.',
          },
        ],
      },
      { position: 3, ...alone, errors: deep },
    ]);
  });

  void test('a 400 without errors[] for an item alone is invalid_body; another 4xx stops the run and shows errors[]', async () => {
    const refusedAlone = await runAgainst(
      ({ method, url }) => {
        if (method === 'GET') return url.includes('/errors') ? noErrors : record('b-1', 1, 0);
        return accepted('b-1', 1);
      },
      ['{"odd":1}', '{"n":1}'],
      {},
      (body) => (body.includes('odd') ? problem(400, 'The request body is not valid JSON.') : undefined),
    );
    assert.deepEqual(
      refusedAlone.errorLines.map((l) => [l.position, l.errors]),
      [
        [
          0,
          [
            {
              field: '',
              code: 'invalid_body',
              message:
                'The service refused the item as a request body: 400 The request body is not valid JSON.',
            },
          ],
        ],
      ],
    );
    assert.deepEqual(refusedAlone.totals, { read: 2, submitted: 1, upserted: 1, failed: 1 });

    const errors = ['a', 'b', 'c', 'd'].map((field) => ({
      field,
      code: 'invalid_value',
      message: `${field} is wrong.`,
    }));
    const stopped = await runAgainst(
      () => problem(422, 'Unprocessable.', errors),
      ['{"n":0}', '{"n":1}', '{"n":2}'],
    );
    assert.equal(
      stopped.outcome.stopped,
      [
        'POST /products/ingestions answered 422: Unprocessable.',
        '  a: invalid_value: a is wrong.',
        '  b: invalid_value: b is wrong.',
        '  c: invalid_value: c is wrong.',
        '  … and 1 more',
        'No item was submitted.',
      ].join('\n'),
    );
    assert.equal(stopped.posts.length, 1);
  });

  void test(
    'an abort cuts short a submission waiting to retry; the accepted batch is followed, the rest named',
    { timeout: 10_000 },
    async () => {
      const interruption = new AbortController();
      let posts = 0;
      const result = await runAgainst(
        ({ method, url }) => {
          if (method === 'GET') return url.includes('/errors') ? noErrors : record('b-1', 2, 0);
          if (++posts === 1) return accepted('b-1', 2);
          // Batch 2 meets an outage; the user presses Ctrl-C while the client waits a minute to retry.
          setImmediate(() => interruption.abort());
          return problem(503, 'down');
        },
        ['{"n":0}', '{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":5}'],
        { signal: interruption.signal },
        undefined,
        [60_000],
      );

      assert.equal(result.outcome.interrupted, true);
      assert.equal(
        result.outcome.stopped,
        'interrupted\nNot submitted: positions 2–3 and every item from position 4 on.',
      );
      // `read` counts the batch read ahead while the last ones were sent (ingest-runner.ts).
      assert.deepEqual(result.totals, { read: 6, submitted: 2, upserted: 2, failed: 0 });
      assert.equal(posts, 2);
    },
  );
});
