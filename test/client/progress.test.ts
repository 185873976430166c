import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createProgress, describeBatch, type BatchReport } from '../../src/client/progress.ts';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('a batch is named by its number, of how many once known, its positions and its parts', () => {
  const whole: BatchReport = {
    seq: 3,
    positions: range(2000, 2999),
    parts: [{ id: 'b-3', status: 'completed', replayed: false }],
    unsent: false,
  };
  assert.equal(describeBatch(whole, 12), 'batch 3 of 12 (positions 2000–2999) b-3 completed');
  assert.equal(describeBatch(whole, null), 'batch 3 (positions 2000–2999) b-3 completed');
  const split: BatchReport = {
    seq: 4,
    positions: [...range(3000, 3009), 3011],
    parts: [
      { id: 'b-4a', status: 'completed', replayed: false },
      { id: 'b-4b', status: 'outcome unknown', replayed: false },
    ],
    unsent: true,
  };
  assert.equal(
    describeBatch(split, null),
    'batch 4 (positions 3000–3009, 3011) b-4a completed, b-4b outcome unknown, the rest not submitted',
  );
  const replayed: BatchReport = {
    seq: 1,
    positions: range(0, 999),
    parts: [{ id: 'b-1', status: 'completed_with_errors', replayed: true }],
    unsent: false,
  };
  assert.equal(
    describeBatch(replayed, 2),
    'batch 1 of 2 (positions 0–999) b-1 completed_with_errors replayed',
  );
  assert.equal(
    describeBatch({ seq: 5, positions: [7], parts: [], unsent: false }, 5),
    'batch 5 of 5 (positions 7) every item refused',
  );
});

test('lines wait for every earlier batch; a batch of which nothing was sent has none', () => {
  const stream = Object.assign(new PassThrough(), { isTTY: false });
  const written: string[] = [];
  stream.on('data', (chunk: Buffer) => written.push(chunk.toString()));
  const progress = createProgress(stream, { quiet: false, startedAt: 0 });
  const counts = { read: 4, submitted: 4, upserted: 4, failed: 0, replayed: 0 };
  const done = (seq: number, parts: BatchReport['parts'], unsent = false) =>
    progress.batchDone(counts, { seq, positions: [seq - 1], parts, unsent });
  done(2, [{ id: 'b-2', status: 'completed', replayed: false }]);
  assert.deepEqual(written, []);
  progress.batchesCut(4);
  done(1, [{ id: 'b-1', status: 'completed', replayed: false }]);
  done(4, [], true);
  done(3, [{ id: 'b-3', status: 'failed', replayed: false }]);
  assert.deepEqual(
    written
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => line.replace(/: read .*$/, '')),
    [
      'batch 1 of 4 (positions 0) b-1 completed',
      'batch 2 of 4 (positions 1) b-2 completed',
      'batch 3 of 4 (positions 2) b-3 failed',
    ],
  );
});
