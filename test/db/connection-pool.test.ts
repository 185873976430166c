import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { Database } from '../../src/db/database.ts';
import { openServerDatabase, READER_LOCK_TIMEOUT_MS } from '../../src/db/server-database.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

const serverUrl = process.env.TEST_DATABASE_URL;
const skip = serverUrl ? false : NEEDS_SERVER;

/** `promise`, or a rejection once `seconds` pass: a test that would hang fails instead. */
function withinSeconds<T>(seconds: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${seconds} s`)), seconds * 1000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

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

/**
 * The server URL with an application name of its own, so the test can find its pool's backends in
 * `pg_stat_activity` (and terminate them) without touching other test files' connections.
 */
function ownUrl(): { url: string; name: string } {
  const name = `pool-test-${randomBytes(6).toString('hex')}`;
  const url = new URL(serverUrl!);
  url.searchParams.set('application_name', name);
  return { url: url.toString(), name };
}

/** The pids of the server's backends named `name`, in order. */
async function backendsOf(admin: Database, name: string): Promise<number[]> {
  const rows = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1 ORDER BY pid',
    [name],
  );
  return rows.map((row) => row.pid);
}

/** Polls the server until `name` has `count` backends and none of `gone`; returns them. */
async function backendsReplaced(
  admin: Database,
  name: string,
  count: number,
  gone: number[],
): Promise<number[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const pids = await backendsOf(admin, name);
    const replaced = pids.length === count && !pids.some((pid) => gone.includes(pid));
    if (replaced || Date.now() >= deadline) return pids;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Ends the backends `pids`. With `waitForExit`, returns once they have exited (PostgreSQL waits up to
 * 5 s): a backend sends its FATAL and then exits, dropping its locks as it goes, so only then are
 * its locks free and its FATAL already in its client's socket.
 */
async function terminate(admin: Database, pids: number[], { waitForExit = false } = {}): Promise<void> {
  const killed = await admin.query<{ done: boolean }>(
    'SELECT pg_terminate_backend(pid, $2) AS done FROM unnest($1::int[]) AS t(pid)',
    [pids, waitForExit ? 5_000 : 0],
  );
  assert.deepEqual(
    killed.map((row) => row.done),
    pids.map(() => true),
  );
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
    const { url, name } = ownUrl();
    const db = await openServerDatabase(url, { max: 3, keepOpen: 3 });
    const admin = await openServerDatabase(serverUrl!, { max: 1 });
    try {
      const before = await backendsOf(admin, name);
      assert.equal(before.length, 3);
      await terminate(admin, before);

      // No query is needed: the pool notices the losses (each backend says so as it ends) and opens
      // three new ones by itself; a pool that did not would have no backends left on the server.
      const after = await backendsReplaced(admin, name, 3, before);
      assert.equal(after.length, 3);
      assert.deepEqual(
        after.filter((pid) => before.includes(pid)),
        [],
      );
      const kept = { open: 3, idle: 3, waiting: 0 };
      assert.deepEqual(await eventually(() => db.connections?.(), kept, 5_000), kept);
      const served = await Promise.all(
        Array.from({ length: 3 }, async () => {
          const rows = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)');
          return rows[0]!.pid;
        }),
      );
      assert.deepEqual(
        served.sort((a, b) => a - b),
        after,
      );
    } finally {
      await db.close();
      await admin.close();
    }
  });

  test(
    'refills around a lock holder without taking the connection it waits for',
    { timeout: 30_000 },
    async () => {
      // A worker holds its tenant lock on one connection and writes through others. With every
      // connection of the pool kept, a refill that held what it got while waiting for a busy one
      // would take the connection the lock holder needs next, and neither would ever finish.
      const { url, name } = ownUrl();
      const db = await openServerDatabase(url, { max: 3, keepOpen: 3 });
      const admin = await openServerDatabase(serverUrl!, { max: 1 });
      try {
        const held = await db.withLock('pool-test', 0, async () => {
          const [holder] = await admin.query<{ pid: number }>(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ANY($1::int[])",
            [await backendsOf(admin, name)],
          );
          const others = (await backendsOf(admin, name)).filter((pid) => pid !== holder!.pid);
          assert.equal(others.length, 2);
          const [victim] = others;
          await terminate(admin, [victim!]);

          // The refill opens one in the victim's place and gives everything back.
          const replaced = await backendsReplaced(admin, name, 3, [victim!]);
          assert.equal(replaced.length, 3);
          const refilled = { open: 3, idle: 2, waiting: 0 };
          assert.deepEqual(await eventually(() => db.connections?.(), refilled, 5_000), refilled);

          // The lock holder's own writes find their two connections.
          const writes = Promise.all(
            [1, 2].map(async () => {
              const rows = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid, pg_sleep(0.05)');
              return rows[0]!.pid;
            }),
          );
          const late = new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 5_000).unref());
          const pids = await Promise.race([writes, late]);
          assert.notEqual(pids, 'stuck');
          return pids as number[];
        });
        assert.notEqual(held, null);
        assert.equal(new Set(held!.value).size, 2);
        const kept = { open: 3, idle: 3, waiting: 0 };
        assert.deepEqual(await eventually(() => db.connections?.(), kept, 5_000), kept);
      } finally {
        await db.close();
        await admin.close();
      }
    },
  );

  test('a held lock holds back no dead row: its idle transaction has no snapshot, and one with a quote in its key is taken', async () => {
    // The tenant lock is held for as long as a tenant's batches drain. A transaction that idles
    // with a snapshot (a query with parameters leaves its portal's) keeps every dead row of the
    // server from being pruned or vacuumed meanwhile (docs/performance.md).
    const { url, name } = ownUrl();
    const db = await openServerDatabase(url, { max: 2, keepOpen: 0 });
    const admin = await openServerDatabase(serverUrl!, { max: 1 });
    const key = `tenant:o'brien\\${randomBytes(4).toString('hex')}`;
    try {
      const held = await db.withLock(key, 0, async () => {
        // Some work meanwhile, as the worker's on its other connections.
        await db.query('SELECT count(*) FROM pg_class');
        return admin.query<{
          state: string;
          xmin: string | null;
          xid: string | null;
          locks: number;
          same_key: boolean;
        }>(
          `SELECT a.state, a.backend_xmin::text AS xmin, a.backend_xid::text AS xid,
                  (SELECT count(*)::int FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory') AS locks,
                  -- The lock's id is the hash of the key as a parameter would give it (so a worker
                  -- of the version before takes the same lock): the literal was escaped right.
                  (SELECT bool_and(((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($2, 0))
                   FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory') AS same_key
           FROM pg_stat_activity a WHERE a.application_name = $1 AND a.state = 'idle in transaction'`,
          [name, `public:${key}`],
        );
      });
      assert.deepEqual(held, {
        value: [{ state: 'idle in transaction', xmin: null, xid: null, locks: 1, same_key: true }],
      });
      // The key is the one taken: a second holder of the same key is refused while it is held.
      const other = await openServerDatabase(serverUrl!, { max: 1 });
      try {
        const refused = await db.withLock(key, 0, () =>
          other.withLock(key, 0, () => Promise.resolve('taken')),
        );
        assert.deepEqual(refused, { value: null });
      } finally {
        await other.close();
      }
    } finally {
      await db.close();
      await admin.close();
    }
  });

  test('a lock whose connection is lost: its holder is told, nothing crashes, and the lock is free', async () => {
    // The server drops a session's advisory locks with the session (a restart, a failover, a
    // terminated backend). The holder's connection sits idle while the holder works, so the error
    // arrives between queries, where an unheard error event would end the process.
    const { url, name } = ownUrl();
    const db = await openServerDatabase(url, { max: 3 });
    const other = await openServerDatabase(serverUrl!, { max: 1 });
    const admin = await openServerDatabase(serverUrl!, { max: 1 });
    const key = `pool-test-${randomBytes(4).toString('hex')}`;
    try {
      const held = await db.withLock(key, 0, async (lockLost) => {
        assert.equal(lockLost.aborted, false);
        assert.equal(await other.withLock(key, 0, () => Promise.resolve('taken')), null);
        const [holder] = await admin.query<{ pid: number }>(
          "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ANY($1::int[])",
          [await backendsOf(admin, name)],
        );
        // The holder can hear of the loss a moment before the server frees the lock: the test
        // waits for the backend's exit before it tries the lock.
        await terminate(admin, [holder!.pid], { waitForExit: true });
        assert.equal(await eventually(() => lockLost.aborted, true, 5_000), true);
        assert.deepEqual(await other.withLock(key, 0, () => Promise.resolve('taken')), { value: 'taken' });
        return 'finished';
      });
      assert.deepEqual(held, { value: 'finished' });
      assert.deepEqual(await db.withLock(key, 0, () => Promise.resolve('again')), { value: 'again' });
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
    } finally {
      await db.close();
      await other.close();
      await admin.close();
    }
  });

  test('a transaction whose connection is lost between statements fails, and the pool goes on', async () => {
    const { url } = ownUrl();
    const db = await openServerDatabase(url, { max: 2 });
    const admin = await openServerDatabase(serverUrl!, { max: 1 });
    try {
      await assert.rejects(
        db.transaction(async (tx) => {
          const [own] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          // The connection's end arrives while no query runs on it: once the backend has exited,
          // its FATAL is in the socket, and the next turn of the event loop has read it.
          await terminate(admin, [own!.pid], { waitForExit: true });
          await new Promise((resolve) => setImmediate(resolve));
          await tx.query('SELECT 1');
        }),
        { message: 'Client has encountered a connection error and is not queryable' },
      );
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);
      assert.deepEqual(await db.transaction((tx) => tx.query('SELECT 2 AS two')), [{ two: 2 }]);
    } finally {
      await db.close();
      await admin.close();
    }
  });

  test('says once per outage that it cannot reopen its kept connections', async () => {
    // The pool reaches the server through a relay the test can cut: cutting it ends every
    // connection and refuses new ones, as a server that went away would.
    const target = new URL(serverUrl!);
    const sockets = new Set<net.Socket>();
    const relay = net.createServer((socket) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const end of [socket, upstream]) {
        sockets.add(end);
        end.on('error', () => undefined);
        end.on('close', () => sockets.delete(end));
      }
      socket.pipe(upstream).pipe(socket);
    });
    const listen = (port: number) =>
      new Promise<number>((resolve) =>
        relay.listen(port, '127.0.0.1', () => resolve((relay.address() as net.AddressInfo).port)),
      );
    const cut = async () => {
      const closed = new Promise((resolve) => relay.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    };
    const port = await listen(0);
    const viaRelay = new URL(serverUrl!);
    viaRelay.port = String(port);
    const errors: string[] = [];
    const db = await openServerDatabase(viaRelay.toString(), {
      max: 2,
      keepOpen: 2,
      onRefillError: (error) => errors.push((error as NodeJS.ErrnoException).code ?? error.message),
    });
    try {
      assert.deepEqual(db.connections?.(), { open: 2, idle: 2, waiting: 0 });
      await cut();
      // Retries at 0.1, 0.3, 0.7 and 1.5 s all fail; only the first is told.
      await new Promise((resolve) => setTimeout(resolve, 1_700));
      assert.deepEqual(errors, ['ECONNREFUSED']);
      assert.deepEqual(db.connections?.(), { open: 0, idle: 0, waiting: 0 });

      // The server is back: the next retry (within 5 s) opens both again.
      await listen(port);
      const kept = { open: 2, idle: 2, waiting: 0 };
      assert.deepEqual(await eventually(() => db.connections?.(), kept, 8_000), kept);
      assert.deepEqual(await db.query('SELECT 1 AS one'), [{ one: 1 }]);

      // A second outage is told again.
      await cut();
      assert.deepEqual(await eventually(() => errors.length, 2, 10_000), 2);
    } finally {
      await db.close();
      if (relay.listening) await cut();
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

  test('reads beside a transaction that holds the pool: on a reader of their own, without its writes', async () => {
    const table = `reader_probe_${randomBytes(6).toString('hex')}`;
    const db = await openServerDatabase(serverUrl!, { max: 1, readers: 1 });
    const plain = await openServerDatabase(serverUrl!, { max: 1 });
    try {
      assert.equal(plain.reader, undefined);
      await db.exec(
        `CREATE TABLE ${table} (k int PRIMARY KEY, v text); INSERT INTO ${table} VALUES (1, 'before')`,
      );
      const seen = await db.transaction(async (tx) => {
        await tx.query(`UPDATE ${table} SET v = 'after' WHERE k = 1`);
        // The pool's one connection is this transaction's: only a reader of its own can answer.
        return withinSeconds(5, db.reader!.query<{ v: string }>(`SELECT v FROM ${table} WHERE k = 1`));
      });
      assert.deepEqual(seen, [{ v: 'before' }]);
      assert.deepEqual(await db.reader!.query(`SELECT v FROM ${table}`), [{ v: 'after' }]);
      assert.deepEqual(db.readerConnections?.(), { open: 1, idle: 1, waiting: 0 });
    } finally {
      await db.exec(`DROP TABLE IF EXISTS ${table}`);
      await Promise.all([db.close(), plain.close()]);
    }
  });

  test('a read queued behind a table lock gives up after the reader’s lock timeout, with 55P03', async () => {
    const table = `reader_lock_${randomBytes(6).toString('hex')}`;
    const db = await openServerDatabase(serverUrl!, { max: 1, readers: 1 });
    try {
      await db.exec(`CREATE TABLE ${table} (k int)`);
      const started = Date.now();
      const refused = await db.transaction(async (tx) => {
        // What an ALTER TABLE of a migration takes, held while the read waits.
        await tx.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        return withinSeconds(10, db.reader!.query(`SELECT k FROM ${table}`)).then(
          () => null,
          (error: { code?: string }) => error.code,
        );
      });
      assert.equal(refused, '55P03');
      assert.ok(Date.now() - started >= READER_LOCK_TIMEOUT_MS, 'gave up before its lock timeout');
      assert.deepEqual(await db.reader!.query(`SELECT k FROM ${table}`), []);
    } finally {
      await db.exec(`DROP TABLE IF EXISTS ${table}`);
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
