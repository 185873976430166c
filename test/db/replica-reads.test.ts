import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database, Queryable } from '../../src/db/database.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';
import { createReplicaReads, type ReplicaReadOutcome } from '../../src/db/replica-reads.ts';
import { openReplicaPool, REPLICA_STATEMENT_TIMEOUT_MS } from '../../src/app/start-replica-reads.ts';

/**
 * The rule of src/db/replica-reads.ts with stand-ins for the two servers: where a request's reads
 * go, given what the replica says of its replay, how long that may take, what happens when the
 * replica fails, and how long reads then skip it. The replica pool's statement timeout on a real
 * server (TEST_DATABASE_URL) at the end; a real standby is in test/db/replica-reads-standby.test.ts.
 */

const PRIMARY_LSN = '0/16B3748';
const serverUrl = process.env.TEST_DATABASE_URL;
const skip = serverUrl ? false : 'a server test: runs with TEST_DATABASE_URL set';
const SKIP_MS = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server that answers the WAL questions with `position` and every other statement with its name. */
function server(name: string, position: () => Promise<boolean> = async () => true) {
  const asked: string[] = [];
  const db: Queryable = {
    async query<R>(text: string) {
      asked.push(text);
      return [{ from: name }] as R[];
    },
    async exec(text: string) {
      asked.push(text);
      if (text.includes('pg_last_wal_replay_lsn')) return [{ replayed: await position() }];
      return [{ lsn: PRIMARY_LSN }];
    },
  };
  return { db, asked };
}

/**
 * Reads over stand-ins: a catch-up bound of 100 ms (unless `waitMs` says otherwise), polls every
 * 10 ms, the replica skipped 300 ms. A test whose outcome must not depend on the bound gives a bound
 * that a stalled machine does not reach.
 */
function setUp(
  position: () => Promise<boolean>,
  { replicaQuery, waitMs = 100 }: { replicaQuery?: () => Promise<unknown[]>; waitMs?: number } = {},
) {
  const primary = server('primary');
  const replica = server('replica', position);
  if (replicaQuery) replica.db.query = replicaQuery as Queryable['query'];
  const heard: Array<{ outcome: ReplicaReadOutcome; error?: unknown }> = [];
  const reads = createReplicaReads({
    primary: primary.db,
    replica: { ...replica.db, close: async () => undefined },
    onRead: (outcome, error) => heard.push(error === undefined ? { outcome } : { outcome, error }),
    waitMs,
    pollMs: 10,
    skipMs: SKIP_MS,
  });
  return { reads, primary, replica, heard };
}

const fromOf = async (db: Queryable) => (await db.query<{ from: string }>('SELECT page'))[0]?.from;

void describe('replica reads: the replica once it has replayed the primary’s position, else the primary', () => {
  test('a replica that has replayed it serves the reads, asked with the primary’s flushed position', async () => {
    const { reads, primary, replica, heard } = setUp(async () => true);
    const db = await reads.consistentReader();
    assert.equal(await fromOf(db), 'replica');
    assert.deepEqual(primary.asked, ['SELECT pg_current_wal_flush_lsn()::text AS lsn']);
    assert.equal(replica.asked.length, 2);
    assert.match(replica.asked[0]!, /pg_last_wal_replay_lsn\(\).*>= '0\/16B3748'::pg_lsn AS replayed/s);
    assert.deepEqual(heard, [{ outcome: 'replica' }]);
  });

  test('a replica that replays it after three answers is waited for', async () => {
    let answers = 0;
    const { reads, heard } = setUp(async () => ++answers > 3, { waitMs: 5_000 });
    const db = await reads.consistentReader();
    assert.equal(await fromOf(db), 'replica');
    assert.equal(answers, 4);
    assert.deepEqual(heard, [{ outcome: 'replica' }]);
  });

  // The bound is 100 ms here: a read waits for it and then goes to the primary. The upper limit
  // only catches a wait that never ends, not a slow machine. A replica that answers no poll at all
  // (one dropping packets throws no error) has failed, and is warned of as failures are; one that
  // answered and then keeps its next answer past the bound is behind.
  const silent = () => new Promise<boolean>(() => undefined);
  const answersOnce = () => {
    let answers = 0;
    return () => (++answers === 1 ? Promise.resolve(false) : silent());
  };
  const atTheBound: Array<[string, () => Promise<boolean>, Array<{ outcome: string; error?: unknown }>]> = [
    ['still behind', async () => false, [{ outcome: 'behind' }]],
    [
      'that does not answer',
      silent,
      [{ outcome: 'failed', error: new Error('the replica answered no poll of its replay within 110 ms') }],
    ],
    ['silent since its first answer', answersOnce(), [{ outcome: 'behind' }]],
  ];
  for (const [replicaIs, position, outcome] of atTheBound) {
    test(`a replica ${replicaIs} at the bound leaves the read to the primary once the bound has passed`, async () => {
      const { reads, heard } = setUp(position);
      const started = performance.now();
      const db = await reads.consistentReader();
      const waited = performance.now() - started;
      assert.equal(await fromOf(db), 'primary');
      assert.ok(waited >= 90 && waited < 5_000, `waited ${waited} ms`);
      assert.deepEqual(heard, outcome);
    });
  }

  test('a replica that cannot be asked leaves the read to the primary at once', async () => {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:5433');
    // A bound of 5 s: "at once" is told from waiting for the bound, whatever the machine's pace.
    const { reads, heard } = setUp(
      async () => {
        throw refused;
      },
      { waitMs: 5_000 },
    );
    const started = performance.now();
    const db = await reads.consistentReader();
    assert.equal(await fromOf(db), 'primary');
    assert.ok(performance.now() - started < 2_500);
    assert.deepEqual(heard, [{ outcome: 'failed', error: refused }]);
  });

  test('a statement the replica fails runs again on the primary, which serves the request’s later ones', async () => {
    const conflict = Object.assign(new Error('canceling statement due to conflict with recovery'), {
      code: '40001',
    });
    let replicaStatements = 0;
    const { reads, primary, heard } = setUp(async () => true, {
      replicaQuery: async () => {
        replicaStatements++;
        if (replicaStatements === 2) throw conflict;
        return [{ from: 'replica' }];
      },
    });
    const db = await reads.consistentReader();
    assert.deepEqual(
      [await fromOf(db), await fromOf(db), await fromOf(db)],
      ['replica', 'primary', 'primary'],
    );
    assert.equal(replicaStatements, 2);
    assert.equal(primary.asked.filter((text) => text === 'SELECT page').length, 2);
    assert.deepEqual(heard, [{ outcome: 'replica' }, { outcome: 'failed', error: conflict }]);
    // The next request skips the replica for a moment, then asks it again.
    assert.equal(await fromOf(await reads.consistentReader()), 'primary');
    await sleep(SKIP_MS + 20);
    assert.equal(await fromOf(await reads.consistentReader()), 'replica');
    assert.deepEqual(heard.slice(2), [{ outcome: 'skipped' }, { outcome: 'replica' }]);
  });

  test('after a read found the replica behind, reads go to the primary without asking either server where it is', async () => {
    const { reads, primary, replica, heard } = setUp(async () => false);
    assert.equal(await fromOf(await reads.consistentReader()), 'primary');
    const [polls, asked] = [replica.asked.length, primary.asked.length];
    for (let i = 0; i < 3; i++) assert.equal(await fromOf(await reads.consistentReader()), 'primary');
    assert.equal(replica.asked.length, polls, 'the replica was not asked again');
    assert.deepEqual(primary.asked.slice(asked), ['SELECT page', 'SELECT page', 'SELECT page']);
    assert.deepEqual(heard, [
      { outcome: 'behind' },
      { outcome: 'skipped' },
      { outcome: 'skipped' },
      { outcome: 'skipped' },
    ]);
  });

  test('once that time has passed one read asks the replica again, the others skip it meanwhile; a replica that has replayed serves again', async () => {
    let replayed = false;
    const { reads, replica, heard } = setUp(async () => replayed);
    await reads.consistentReader();
    await sleep(SKIP_MS + 50);
    // Still behind: the read asking it waits the bound, and one beside it goes to the primary at once.
    const polls = replica.asked.length;
    const asking = reads.consistentReader();
    assert.equal(await fromOf(await reads.consistentReader()), 'primary');
    assert.equal(await fromOf(await asking), 'primary');
    assert.ok(replica.asked.length > polls, 'the replica was asked again');
    // Found behind again: the time starts over.
    assert.equal(await fromOf(await reads.consistentReader()), 'primary');
    await sleep(SKIP_MS + 50);
    replayed = true;
    assert.equal(await fromOf(await reads.consistentReader()), 'replica');
    assert.equal(await fromOf(await reads.consistentReader()), 'replica');
    assert.deepEqual(
      heard.map(({ outcome }) => outcome),
      ['behind', 'skipped', 'behind', 'skipped', 'replica', 'replica'],
    );
  });

  test('a primary that cannot give its position fails the read, as the primary would fail it', async () => {
    const { reads, primary } = setUp(async () => true);
    const down = new Error('Connection terminated unexpectedly');
    primary.db.exec = async () => {
      throw down;
    };
    await assert.rejects(reads.consistentReader(), down);
  });
});

void describe('the replica pool’s statement timeout, on a server', { skip }, () => {
  test('every statement of the replica pool runs with it, with or without a schema, as query and as exec', async () => {
    assert.equal(REPLICA_STATEMENT_TIMEOUT_MS, 10_000);
    for (const databaseSchema of [undefined, 'replica_reads_timeout']) {
      const pool = await openReplicaPool(serverUrl!, { databaseReadPoolSize: 1, databaseSchema });
      try {
        const ask = "SELECT current_setting('statement_timeout') AS timeout";
        const [queried] = await pool.query<{ timeout: string }>(ask);
        const [executed] = await pool.exec(ask);
        assert.deepEqual([queried?.timeout, executed?.timeout], ['10s', '10s'], `schema ${databaseSchema}`);
      } finally {
        await pool.close();
      }
    }
  });

  test('a statement running past it is cancelled on the replica and run again on the primary, counted failed', async () => {
    // One server in both roles, told apart by application_name: not in recovery, it has replayed all.
    const opened: Database[] = [];
    try {
      const replica = await openServerDatabase(serverUrl!, {
        max: 1,
        applicationName: 'replica',
        statementTimeoutMs: 100,
      });
      opened.push(replica);
      const primary = await openServerDatabase(serverUrl!, { max: 1, applicationName: 'primary' });
      opened.push(primary);
      const heard: Array<{ outcome: ReplicaReadOutcome; code?: unknown }> = [];
      const reads = createReplicaReads({
        primary,
        replica,
        onRead: (outcome, error) =>
          heard.push(
            error === undefined ? { outcome } : { outcome, code: (error as { code?: unknown }).code },
          ),
      });
      const db = await reads.consistentReader();
      const rows = await db.query<{ from: string }>(
        "SELECT current_setting('application_name') AS from, pg_sleep(0.3)::text AS slept",
      );
      assert.deepEqual(rows, [{ from: 'primary', slept: '' }]);
      assert.deepEqual(heard, [{ outcome: 'replica' }, { outcome: 'failed', code: '57014' }]);
    } finally {
      for (const db of opened) await db.close();
    }
  });
});
