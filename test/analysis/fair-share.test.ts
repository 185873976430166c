/** A capacity shared by owners in turn: the core of the analyzer's work queue and decode budget. */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { createFairShare } from '../../src/analysis/fair-share.ts';

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Claims `weight` for `owner`, noting the grant in `granted`; resolves with the give-back. */
function claimer(share: ReturnType<typeof createFairShare>, granted: string[]) {
  return (name: string, owner: string, weight: number) =>
    share.acquire(owner, weight).then((giveBack) => {
      granted.push(name);
      return giveBack;
    });
}

void test('claims are granted while their weights fit, and wait in order when they do not', async () => {
  const share = createFairShare(10);
  const granted: string[] = [];
  const claim = claimer(share, granted);
  const a1 = claim('a1', 'a', 6);
  const a2 = claim('a2', 'a', 3);
  const a3 = claim('a3', 'a', 5);
  // a4 would fit beside a1 and a2, but a3 came first: a heavy claim is not passed over.
  const a4 = claim('a4', 'a', 1);
  await settle();
  assert.deepEqual(granted, ['a1', 'a2']);
  assert.deepEqual([share.used, share.waiting], [9, 2]);
  (await a1)();
  await settle();
  assert.deepEqual(granted, ['a1', 'a2', 'a3', 'a4']);
  assert.deepEqual([share.used, share.waiting], [9, 0]);
  for (const giveBack of await Promise.all([a2, a3, a4])) giveBack();
  assert.equal(share.used, 0);
});

void test('owners with waiting claims are served in turn, each in its own order', async () => {
  const share = createFairShare(1);
  const granted: string[] = [];
  const claim = claimer(share, granted);
  const claims = new Map(
    [
      ['a1', 'a'],
      ['a2', 'a'],
      ['a3', 'a'],
      ['b1', 'b'],
      ['b2', 'b'],
      ['c1', 'c'],
    ].map(([name, owner]) => [name!, claim(name!, owner!, 1)]),
  );
  // One unit: each grant waits for the one before it to be given back. Bounded, so that a grant
  // that never comes fails the test instead of spinning.
  for (let round = 0; round < 20 && granted.length < claims.size; round++) {
    await settle();
    (await claims.get(granted.at(-1)!)!)();
  }
  // a1 was granted at once; from then on a, b and c take turns (a was first in line).
  assert.deepEqual(granted, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2']);
});

void test('giving back twice counts once, and a claim larger than the capacity is refused', async () => {
  const share = createFairShare(2);
  const giveBack = await share.acquire('a', 2);
  giveBack();
  giveBack();
  assert.equal(share.used, 0);
  const both = await Promise.all([share.acquire('a', 1), share.acquire('b', 1)]);
  assert.equal(share.used, 2);
  both.forEach((give) => give());
  await assert.rejects(share.acquire('a', 3), RangeError);
  await assert.rejects(share.acquire('a', 0), RangeError);
});
