import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKeyedMutex } from '../../src/db/keyed-mutex.ts';

test('a waiter that times out does not let the next caller in while the holder still runs', async () => {
  const mutex = createKeyedMutex();
  let running = 0;
  let most = 0;
  const hold = (ms: number) => async () => {
    running++;
    most = Math.max(most, running);
    await sleep(ms);
    running--;
    return 'ran';
  };
  const a = mutex.tryRun('k', 0, hold(150));
  const b = mutex.tryRun('k', 20, hold(10));
  await sleep(40); // b has timed out by now; a is still running
  const c = mutex.tryRun('k', 1000, hold(10));
  assert.deepEqual(await Promise.all([a, b, c]), ['ran', null, 'ran']);
  assert.equal(most, 1);
});

test('different keys do not wait for each other, and a free key is taken at once with no wait', async () => {
  const mutex = createKeyedMutex();
  const order: string[] = [];
  const slow = mutex.tryRun('x', 0, async () => {
    await sleep(50);
    order.push('x');
    return 1;
  });
  const other = await mutex.tryRun('y', 0, async () => {
    order.push('y');
    return 2;
  });
  assert.equal(other, 2);
  assert.equal(await slow, 1);
  assert.deepEqual(order, ['y', 'x']);
});
