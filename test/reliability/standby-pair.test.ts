import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/db/database.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';
import { startStandbyPair, type StandbyPair } from '../../reliability/standby-pair.ts';
import { standbyPairMissing } from '../helpers/standby-prerequisites.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One writer inserting numbered rows one at a time through `db` until `stop()`, remembering the
 * numbers whose INSERT was acknowledged; an error (the failover) is retried with the next number.
 */
function writer(db: Database) {
  const acknowledged: number[] = [];
  let running = true;
  let failures = 0;
  const done = (async () => {
    for (let n = 0; running; n++) {
      try {
        await db.query('INSERT INTO marks (n) VALUES ($1)', [n]);
        acknowledged.push(n);
      } catch {
        failures++;
        await sleep(50);
      }
    }
  })();
  return {
    acknowledged,
    failures: () => failures,
    async stop() {
      running = false;
      await done;
    },
  };
}

/**
 * A failover as `npm run chaos -- --failover` makes it (reliability/standby-pair.ts): the primary
 * stopped hard, the standby promoted, PgBouncer repointed; the service's pool keeps its URL
 * (PgBouncer's). The standby's WAL receiver is stalled for a second first, while a writer goes on,
 * so that the difference between synchronous and asynchronous replication shows.
 */
void describe('a failover to a streaming standby behind PgBouncer', { skip: standbyPairMissing() }, () => {
  const opened: Array<{ pair: StandbyPair; db?: Database }> = [];
  after(async () => {
    for (const { pair, db } of opened) {
      await db?.close().catch(() => undefined);
      await pair.destroy();
    }
  });

  const setUp = async (synchronous: boolean) => {
    const pair = await startStandbyPair({ synchronous });
    const entry: { pair: StandbyPair; db?: Database } = { pair };
    opened.push(entry);
    const db = await openServerDatabase(pair.url, { max: 4, keepOpen: 2 });
    entry.db = db;
    await db.exec('CREATE TABLE marks (n int PRIMARY KEY)');
    return { pair, db };
  };

  test('synchronous: every acknowledged write survives, a held lock hears of its loss, the same pool writes after', async () => {
    const { pair, db } = await setUp(true);
    const rows = writer(db);
    await sleep(300);
    const outcome = await db.withLock('tenant:a', 0, async (lockLost) => {
      const times = await pair.failover(1_000);
      const heard = await new Promise<boolean>((resolve) => {
        if (lockLost.aborted) resolve(true);
        lockLost.addEventListener('abort', () => resolve(true), { once: true });
        setTimeout(() => resolve(false), 5_000).unref();
      });
      return { heard, times };
    });
    await sleep(500);
    await rows.stop();
    assert.equal(outcome?.value.heard, true, 'the lock holder hears that its connection is gone');
    const [state] = await db.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    assert.equal(state?.standby, false, 'the pool now reaches the promoted standby, a primary');
    const present = new Set((await db.query<{ n: number }>('SELECT n FROM marks')).map((r) => r.n));
    const lost = rows.acknowledged.filter((n) => !present.has(n));
    assert.deepEqual(lost, [], 'acknowledged writes missing after the promotion');
    assert.ok(rows.acknowledged.length > 0 && rows.failures() > 0, 'the writer ran across the failover');
    assert.deepEqual(await db.withLock('tenant:a', 0, async () => 'again'), { value: 'again' });
  });

  test('asynchronous: the writes acknowledged while the standby lagged are lost by the promotion', async () => {
    const { pair, db } = await setUp(false);
    const rows = writer(db);
    await sleep(300);
    await pair.failover(1_000);
    await sleep(500);
    await rows.stop();
    const present = new Set((await db.query<{ n: number }>('SELECT n FROM marks')).map((r) => r.n));
    const lost = rows.acknowledged.filter((n) => !present.has(n));
    // What a second's lag loses: every write acknowledged in it (how many depends on the machine).
    assert.ok(lost.length > 0, 'a lagging asynchronous standby loses acknowledged writes');
    // The standby's WAL is a prefix of the primary's: what is lost is the run of writes
    // acknowledged last before the stop, none before it and none after the promotion.
    const between = rows.acknowledged.filter((n) => n >= lost[0]! && n <= lost.at(-1)!);
    assert.deepEqual(between, lost);
    const afterwards = rows.acknowledged.filter((n) => n > lost.at(-1)!);
    assert.ok(
      afterwards.every((n) => present.has(n)),
      'writes after the promotion are kept',
    );
  });
});
