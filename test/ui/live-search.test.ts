/**
 * The dashboard's rule for a series of requests where only the newest answer counts
 * (ui/src/live-search.ts), on answers that arrive out of order without being aborted: the abort
 * alone cannot be relied on (an answer may already be on its way, or the server ignore it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isAbort, latestRequest } from '../../ui/src/live-search.ts';

void test('an older answer arriving after a newer one is recognised as stale, and its request was aborted', async () => {
  const requests = latestRequest();
  const drawn: string[] = [];
  const answer = (text: string, ms: number) =>
    new Promise<string>((resolve) => setTimeout(() => resolve(text), ms));
  const ask = async (text: string, ms: number) => {
    const turn = requests.start();
    const got = await answer(text, ms);
    if (turn.isLatest()) drawn.push(got);
    return turn;
  };
  const first = ask('bil', 30);
  const second = ask('billy', 5);
  const [older, newer] = await Promise.all([first, second]);
  assert.deepEqual(drawn, ['billy']);
  assert.equal(older.signal.aborted, true);
  assert.equal(newer.signal.aborted, false);
  assert.equal(newer.isLatest(), true);
  assert.equal(isAbort(new DOMException('gone', 'AbortError')), true);
  assert.equal(isAbort(new Error('gone')), false);
});
