import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openServerDatabase } from '../../src/db/database.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

/** The server pool opens the connections it keeps before it is used, and keeps only those. */

const serverUrl = process.env.TEST_DATABASE_URL;
const skip = serverUrl ? false : NEEDS_SERVER;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

void describe('the server connection pool', { skip }, () => {
  test('opens the kept connections at once and closes only the others when idle', async () => {
    const db = await openServerDatabase(serverUrl!, { max: 5, keepOpen: 3, idleMs: 100 });
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

      await sleep(400);
      assert.deepEqual(db.connections?.(), { open: 3, idle: 3, waiting: 0 });
    } finally {
      await db.close();
    }
  });

  test('refuses to open when the kept connections cannot be made', async () => {
    // Port 1 on the loopback: nothing listens there.
    await assert.rejects(openServerDatabase('postgres://postgres@127.0.0.1:1/test', { keepOpen: 2 }), {
      code: 'ECONNREFUSED',
    });
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
