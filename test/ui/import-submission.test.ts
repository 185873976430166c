import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { SourceItem } from '../../src/import-pipeline/file-items.ts';
import type { Refusal, Submitter } from '../../src/import-pipeline/pipeline-sides.ts';
import {
  ImportSubmission,
  type RefusedItem,
  type SubmissionScreen,
  type SubmittedPart,
} from '../../ui/src/import/import-submission.ts';

/** A refusal as the page's `call` would throw it, read back by `refusal`. */
class Refused extends Error {
  constructor(readonly answer: Refusal) {
    super(`refused ${answer.status}`);
  }
}

/** A service that answers each request by `answer`, recording the requests' keys, labels and sizes. */
function fakeService(answer: (count: number, key: string, call: number) => Refusal | 'accept' | Error) {
  const requests: Array<{ key: string; label: string; count: number }> = [];
  const submitter: Submitter = {
    submit(body, { idempotencyKey = '', label = '' }) {
      const count = (JSON.parse(body) as { items: unknown[] }).items.length;
      requests.push({ key: idempotencyKey, label, count });
      const said = answer(count, idempotencyKey, requests.length);
      if (said instanceof Error) return Promise.reject(said);
      if (said !== 'accept') return Promise.reject(new Refused(said));
      const replayed = requests.slice(0, -1).some((request) => request.key === idempotencyKey);
      return Promise.resolve({ batch_id: `b-${idempotencyKey}`, replayed });
    },
    refusal: (error) => (error instanceof Refused ? error.answer : undefined),
  };
  return { submitter, requests };
}

/** A file of `count` JSON items, one per line from line 2 (the first line being blank). */
async function* fileOf(count: number): AsyncGenerator<SourceItem> {
  for (let position = 0; position < count; position++)
    yield { position, line: position + 2, text: `{"external_id":"p${position}"}` };
}

function recordingScreen() {
  const seen = { accepted: [] as SubmittedPart[], refused: [] as RefusedItem[], waits: [] as number[] };
  const screen: SubmissionScreen = {
    sending: () => {},
    waiting: (waitMs) => seen.waits.push(waitMs),
    accepted: (part) => seen.accepted.push(part),
    refused: (item) => seen.refused.push(item),
  };
  return { seen, screen };
}

const request = (count: number, screen: SubmissionScreen) => ({
  items: fileOf(count),
  mode: 'all' as const,
  invalid: new Set<number>(),
  fileName: 'catalog.jsonl',
  itemCount: count,
  screen,
  signal: new AbortController().signal,
});

void describe('the dashboard submission, without a page', () => {
  void test('a batch refused with 413 is sent again in halves, each under its own part key', async () => {
    const { submitter, requests } = fakeService((count) =>
      count > 2 ? { status: 413, detail: 'The body is over 64 MiB.' } : 'accept',
    );
    const submission = new ImportSubmission(submitter, { newRunId: () => 'run-1' });
    const { seen, screen } = recordingScreen();
    assert.deepEqual(await submission.send(request(5, screen)), { done: true, batches: 1 });
    assert.deepEqual(
      requests.map(({ key, count }) => [key, count]),
      [
        ['ingest-run-1-0-5', 5],
        ['ingest-run-1-0-3', 3],
        ['ingest-run-1-0-2', 2],
        ['ingest-run-1-2-1', 1],
        ['ingest-run-1-3-2', 2],
      ],
    );
    assert.deepEqual(
      seen.accepted.map(({ seq, positions, lines }) => ({ seq, positions, lines })),
      [
        { seq: 1, positions: [0, 1], lines: [2, 3] },
        { seq: 1, positions: [2], lines: [4] },
        { seq: 1, positions: [3, 4], lines: [5, 6] },
      ],
    );
    assert.ok(requests.every((r) => r.label === 'catalog.jsonl 1/1'));
  });

  void test('a lone item refused with 413 is listed at its line, the others sent', async () => {
    const { submitter } = fakeService((count, key) =>
      count > 1 || key === 'ingest-run-1-1-1' ? { status: 413, detail: 'too large' } : 'accept',
    );
    const { seen, screen } = recordingScreen();
    await new ImportSubmission(submitter, { newRunId: () => 'run-1' }).send(request(2, screen));
    assert.deepEqual(seen.refused, [
      {
        position: 1,
        line: 3,
        errors: [
          {
            field: '',
            code: 'payload_too_large',
            message: 'The item alone is larger than the service accepts: 413 too large',
          },
        ],
      },
    ]);
    assert.deepEqual(
      seen.accepted.map((part) => part.positions),
      [[0]],
    );
  });

  void test('a 429 waits its Retry-After and sends the same part again under the same key', async () => {
    const { submitter, requests } = fakeService((_count, _key, call) =>
      call === 1 ? { status: 429, detail: 'slow down', retryAfter: '2' } : 'accept',
    );
    const slept: number[] = [];
    const submission = new ImportSubmission(submitter, {
      newRunId: () => 'run-1',
      sleep: (ms) => {
        slept.push(ms);
        return Promise.resolve();
      },
    });
    const { seen, screen } = recordingScreen();
    await submission.send(request(3, screen));
    assert.deepEqual(slept, [2000]);
    assert.deepEqual(seen.waits, [2000]);
    assert.deepEqual(
      requests.map((r) => r.key),
      ['ingest-run-1-0-3', 'ingest-run-1-0-3'],
    );
  });

  void test('batches hold at most 1000 items; a resume skips settled batches and keeps the keys', async () => {
    let down = true;
    const { submitter, requests } = fakeService((_count, key) =>
      key.endsWith('-1000-1000') && down ? new Error('The service could not be reached.') : 'accept',
    );
    const submission = new ImportSubmission(submitter, { newRunId: () => 'run-1' });
    const { seen, screen } = recordingScreen();
    const first = await submission.send(request(2500, screen));
    assert.equal(first.done, false);
    assert.equal(first.done === false && first.seq, 2);
    down = false;
    assert.deepEqual(await submission.send(request(2500, screen)), { done: true, batches: 3 });
    assert.deepEqual(
      requests.map(({ key, count, label }) => [key, count, label]),
      [
        ['ingest-run-1-0-1000', 1000, 'catalog.jsonl 1/3'],
        ['ingest-run-1-1000-1000', 1000, 'catalog.jsonl 2/3'],
        ['ingest-run-1-1000-1000', 1000, 'catalog.jsonl 2/3'],
        ['ingest-run-1-2000-500', 500, 'catalog.jsonl 3/3'],
      ],
    );
    assert.deepEqual(
      seen.accepted.map((part) => part.seq),
      [1, 2, 3],
    );
  });

  void test('sending only the valid items is a new run: other batches, other keys', async () => {
    const { submitter, requests } = fakeService(() => 'accept');
    let runs = 0;
    const submission = new ImportSubmission(submitter, { newRunId: () => `run-${++runs}` });
    const { screen } = recordingScreen();
    await submission.send(request(3, screen));
    await submission.send({ ...request(3, screen), mode: 'valid', invalid: new Set([0]), itemCount: 2 });
    assert.deepEqual(
      requests.map((r) => [r.key, r.count]),
      [
        ['ingest-run-1-0-3', 3],
        ['ingest-run-2-1-2', 2],
      ],
    );
  });
});
