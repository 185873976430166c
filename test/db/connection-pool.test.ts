import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { openServerDatabase } from '../../src/db/database.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

const serverUrl = process.env.TEST_DATABASE_URL;
const skip = serverUrl ? false : NEEDS_SERVER;

/** Polls `read` until it returns `expected` or `ms` pass; returns the last value read. */
async function eventually<T>(read: () => T, expected: T, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let value = read();
  while (!isDeepStrictEqual(value, expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = read();
  }
  return value;
}

void describe('the server connection pool', { skip }, () => {
  test('opens the kept connections at once and closes only the others when idle', async () => {
    const db = await openServerDatabase(serverUrl!, { max: 5, keepOpen: 3, idleMs: 1000 });
    try {
      assert.deepEqual(db.connections?.(), { open: 3, idle: 3, waiting: 0 });

      // Five at once: the pool grows to its maximum, the two beyond the kept three opened on demand.
      const pids = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const rows = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.1)');
          return rows[0]!.pid;
        }),
      );
      assert.equal(new Set(pids).size, 5);
      assert.deepEqual(db.connections?.(), { open: 5, idle: 5, waiting: 0 });

      // A second after they were last used, the two close and the kept three stay.
      const settled = { open: 3, idle: 3, waiting: 0 };
      assert.deepEqual(await eventually(() => db.connections?.(), settled, 5_000), settled);
    } finally {
      await db.close();
    }
  });

  test('opens the kept connections again when their backends are gone', async () => {
    const db = await openServerDatabase(serverUrl!, { max: 3, keepOpen: 3 });
    const admin = await openServerDatabase(serverUrl!, { max: 1 });
    // Three at once on a pool of three: the pids of the kept connections.
    const pidsOf = () =>
      Promise.all(
        Array.from({ length: 3 }, async () => {
          const rows = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)');
          return rows[0]!.pid;
        }),
      );
    try {
      const before = await pidsOf();
      assert.equal(new Set(before).size, 3);
      const killed = await admin.query<{ done: boolean }>(
        'SELECT pg_terminate_backend(pid) AS done FROM unnest($1::int[]) AS t(pid)',
        [before],
      );
      assert.deepEqual(
        killed.map((row) => row.done),
        [true, true, true],
      );

      // No query is needed: the pool notices the losses at once (each backend says so as it ends)
      // and opens three new ones by itself; a pool that did not would hold none by now.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const kept = { open: 3, idle: 3, waiting: 0 };
      assert.deepEqual(await eventually(() => db.connections?.(), kept, 5_000), kept);
      const after = await pidsOf();
      assert.equal(new Set(after).size, 3);
      assert.deepEqual(
        after.filter((pid) => before.includes(pid)),
        [],
      );
    } finally {
      await db.close();
      await admin.close();
    }
  });

  test('opens nothing before the first query when it keeps nothing', async () => {
    const db = await openServerDatabase(serverUrl!, { max: 5 });
    try {
      assert.deepEqual(db.connections?.(), { open: 0, idle: 0, waiting: 0 });
      await db.query('SELECT 1');
      assert.deepEqual(db.connections?.(), { open: 1, idle: 1, waiting: 0 });
    } finally {
      await db.close();
    }
  });
});

void test('a pool that cannot open its kept connections refuses to open', async () => {
  // Port 1 on the loopback: nothing listens there.
  await assert.rejects(openServerDatabase('postgres://postgres@127.0.0.1:1/test', { keepOpen: 2 }), {
    code: 'ECONNREFUSED',
  });
});
