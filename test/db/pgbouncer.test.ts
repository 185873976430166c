import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/database.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';
import { dropSchemaWithJobs } from '../helpers/drop-schema.ts';
import { pgBouncerMissing, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';

/**
 * The server database through a PgBouncer in transaction pooling mode (docs/deployment.md): with
 * fewer server connections than the pools hold, consecutive statements of one client land on
 * different server connections, so anything kept in a session would be seen to go missing.
 */
void describe(
  'the server database behind PgBouncer in transaction pooling mode',
  { skip: pgBouncerMissing() },
  () => {
    const schema = `test_${randomBytes(6).toString('hex')}`;
    let bouncer: PgBouncer;
    let first: Database;
    let second: Database;

    before(async () => {
      bouncer = await startPgBouncer({ poolSize: 3 });
      first = await openServerDatabase(bouncer.url, { schema, max: 6, readers: 2 });
      second = await openServerDatabase(bouncer.url, { schema, max: 6 });
      await first.transaction(async (tx) => {
        await tx.exec(`CREATE SCHEMA ${schema}`);
        await tx.exec('CREATE TABLE marks (n int)');
      });
    });
    after(async () => {
      await first?.close();
      await second?.close();
      await bouncer?.stop();
      await dropSchemaWithJobs(process.env.TEST_DATABASE_URL!, schema);
    });

    test('a tenant lock is held while its holder runs other statements, and free once it returns', async () => {
      const inside = await first.withLock('tenant:a', 0, async () => {
        // Statements of both pools meanwhile, enough to go round every server connection.
        const others = await Promise.all(
          Array.from({ length: 6 }, (_, n) => first.query<{ n: number }>('SELECT $1::int AS n', [n])),
        );
        const taken = await second.withLock('tenant:a', 300, async () => 'ran');
        const other = await second.withLock('tenant:b', 0, async () => 'ran');
        return { others: others.map((rows) => rows[0]!.n), taken, other };
      });
      assert.deepEqual(inside, {
        value: { others: [0, 1, 2, 3, 4, 5], taken: null, other: { value: 'ran' } },
      });
      assert.deepEqual(await second.withLock('tenant:a', 0, async () => 'after'), { value: 'after' });
      // Nothing is left held on a server connection: each of several tries from either side gets it.
      for (const db of [first, second, first, second]) {
        assert.deepEqual(await db.withLock('tenant:a', 0, async () => 'again'), { value: 'again' });
      }
    });

    test('a lock whose server connection is ended reports lockLost, and the lock is free at once', async () => {
      const key = `${schema}:tenant:ended`;
      const outcome = await first.withLock('tenant:ended', 0, async (lockLost) => {
        const [holder] = await second.query<{ pid: number }>(
          `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
          [key],
        );
        // Returns once the backend has exited (PostgreSQL waits up to 5 s), and so dropped its locks.
        await second.query('SELECT pg_terminate_backend($1, 5000)', [holder!.pid]);
        // PgBouncer passes the server's end on and closes the client connection that held it.
        const heard = await new Promise<boolean>((resolve) => {
          if (lockLost.aborted) resolve(true);
          lockLost.addEventListener('abort', () => resolve(true), { once: true });
          setTimeout(() => resolve(false), 5_000).unref();
        });
        const meanwhile = await second.withLock('tenant:ended', 0, async () => 'taken');
        return { heard, meanwhile };
      });
      assert.deepEqual(outcome, { value: { heard: true, meanwhile: { value: 'taken' } } });
    });

    test('the schema is in effect for single statements, transactions and multi-statement strings', async () => {
      const single = await Promise.all(
        Array.from({ length: 6 }, () => first.query<{ s: string }>('SELECT current_schema() AS s')),
      );
      assert.deepEqual(
        single.map((rows) => rows[0]!.s),
        Array.from({ length: 6 }, () => schema),
      );
      await first.query('INSERT INTO marks (n) VALUES ($1)', [1]);
      await first.exec('INSERT INTO marks (n) VALUES (2); INSERT INTO marks (n) VALUES (3)');
      await first.transaction((tx) => tx.query('INSERT INTO marks (n) VALUES ($1)', [4]));
      assert.deepEqual(await second.query('SELECT n FROM marks ORDER BY n'), [
        { n: 1 },
        { n: 2 },
        { n: 3 },
        { n: 4 },
      ]);
    });

    test("the reader's lock timeout and schema apply to its reads, and to nothing else", async () => {
      const [read] = await first.reader!.query<{ timeout: string; s: string }>(
        "SELECT current_setting('lock_timeout') AS timeout, current_schema() AS s",
      );
      assert.deepEqual(read, { timeout: '2s', s: schema });
      const rest = await Promise.all(
        Array.from({ length: 6 }, () =>
          first.query<{ timeout: string }>("SELECT current_setting('lock_timeout') AS timeout"),
        ),
      );
      assert.deepEqual(
        rest.map((rows) => rows[0]!.timeout),
        Array.from({ length: 6 }, () => '0'),
      );
    });
  },
);
