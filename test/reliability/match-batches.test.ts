import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchBatches } from '../../reliability/chaos-checks.ts';

/**
 * The chaos run's accounting of submissions whose answer was lost: one without an Idempotency-Key
 * may have created a batch just before the one whose 202 came, with the same items, and nowhere
 * else; one with a key made exactly one batch.
 */

const a = ['a'];
const b = ['b1', 'b2'];
const listed = (...ids: Array<[string, number]>) =>
  ids.map(([batch_id, received_count]) => ({ batch_id, received_count }));

void test('accepted batches in order map to their items; a lost attempt that stored one maps to its retry', () => {
  const submissions = [
    { items: a, batchId: 'A', lost: 0 },
    { items: b, batchId: 'B', lost: 2 },
  ];
  assert.deepEqual(matchBatches(submissions, listed(['A', 1], ['X', 2], ['B', 2])), [
    { batchId: 'A', items: a, known: true },
    { batchId: 'X', items: b, known: false },
    { batchId: 'B', items: b, known: true },
  ]);
  // Lost attempts that stored nothing leave nothing to match.
  assert.equal(matchBatches(submissions, listed(['A', 1], ['B', 2])).length, 2);
});

void test('a batch nobody submitted, a missing one or one out of order fails the match', () => {
  const submissions = [
    { items: a, batchId: 'A', lost: 0 },
    { items: b, batchId: 'B', lost: 1 },
  ];
  assert.throws(
    () => matchBatches(submissions, listed(['X', 1], ['A', 1], ['B', 2])),
    /matches no submission/,
  );
  assert.throws(
    () => matchBatches(submissions, listed(['A', 1], ['X', 2], ['Y', 2], ['B', 2])),
    /matches no submission/,
  );
  assert.throws(() => matchBatches(submissions, listed(['A', 1], ['X', 1], ['B', 2])), /lost batch X's size/);
  assert.throws(() => matchBatches(submissions, listed(['A', 1])), /accepted batches missing/);
  assert.throws(() => matchBatches(submissions, listed(['B', 2], ['A', 1])), /matches no submission|missing/);
});

void test('a submission with an Idempotency-Key made one batch, however many of its answers were lost', () => {
  const submissions = [
    { items: a, batchId: 'A', lost: 0, keyed: true },
    { items: b, batchId: 'B', lost: 3, keyed: true },
  ];
  assert.deepEqual(matchBatches(submissions, listed(['A', 1], ['B', 2])), [
    { batchId: 'A', items: a, known: true },
    { batchId: 'B', items: b, known: true },
  ]);
  // A second batch with its items is a key that did not hold.
  assert.throws(
    () => matchBatches(submissions, listed(['A', 1], ['X', 2], ['B', 2])),
    /matches no submission/,
  );
});
