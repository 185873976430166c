import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import pg from 'pg';
import { startStandbyPair, type StandbyPair } from '../../reliability/standby-pair.ts';
import { standbyPairMissing } from '../helpers/standby-prerequisites.ts';
import { REPLICA_CATCH_UP_MS, REPLICA_POLL_MS, REPLICA_SKIP_MS } from '../../src/db/replica-reads.ts';
import { REPLICA_READS_APPLICATION_NAME } from '../../src/app/start-replica-reads.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/**
 * Reads from a streaming replica (DATABASE_READ_URL, docs/deployment.md#read-replica), on real
 * servers: a PostgreSQL primary and a hot standby made from it with pg_basebackup
 * (reliability/standby-pair.ts), the whole service with DATABASE_URL at the primary (through the
 * pair's PgBouncer in transaction pooling mode) and DATABASE_READ_URL at the standby. The standby's
 * replay is paused to hold it behind: the export, search and history a client reads right after its
 * own write then come from the primary (the first after waiting for the standby, the others at
 * once, as it was behind a moment ago); once it replays again, from the standby, which its own
 * statistics show.
 */

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function ask<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

void describe('reads from a streaming replica', { skip: standbyPairMissing() }, () => {
  let pair: StandbyPair;
  let service: TestService;
  let schema: string;
  before(async () => {
    pair = await startStandbyPair({ synchronous: false });
    service = await startTestService({
      DATABASE_URL: pair.url,
      DATABASE_READ_URL: pair.standbyUrl,
    });
    schema = service.service.config.databaseSchema!;
  });
  after(async () => {
    await service?.stop().catch(() => undefined);
    await pair?.destroy();
  });

  /** Index and sequential scans of the schema's products table on the standby, as it counts them. */
  const standbyScans = async () => {
    const [row] = await ask<{ scans: string }>(
      pair.standbyUrl,
      `SELECT (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text AS scans
         FROM pg_stat_user_tables WHERE schemaname = '${schema}' AND relname = 'products'`,
    );
    return Number(row?.scans ?? 0);
  };
  /**
   * The standby's scans once every read that ran there is counted. PostgreSQL 15 reports an idle
   * backend's statistics up to 10 s late (PGSTAT_IDLE_INTERVAL), but at once as it exits: the
   * service's connections to the standby are ended first (its pool opens new ones as reads need
   * them), then the count is read until it stops changing (the test's own connections, closed
   * after each query, report as they exit).
   */
  const settledStandbyScans = async () => {
    await ask(
      pair.standbyUrl,
      `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
        WHERE application_name = '${REPLICA_READS_APPLICATION_NAME}'`,
    );
    let last = await standbyScans();
    for (let tries = 0; ; tries++) {
      await sleep(1_200);
      const now = await standbyScans();
      if (now === last) return now;
      assert.ok(tries < 10, 'the standby’s scans settle');
      last = now;
    }
  };
  const counted = async () => {
    const values = (await service.service.metrics.replicaReads.get()).values;
    return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
  };
  const standbyName = async (externalId: string) =>
    (
      await ask<{ name: string }>(
        pair.standbyUrl,
        `SELECT name FROM ${schema}.products WHERE external_id = '${externalId}'`,
      )
    )[0]?.name ?? null;

  test('right after a write the reads come from the primary while the replica is behind, and from the replica once it has replayed it', async () => {
    const tenant = service.tenant('replica');
    const token = await service.token(tenant);
    const table = product({
      external_id: 'table-1',
      name: 'Oak table',
      variants: [variant({ sku: 'tb-1' })],
    });
    await service.waitForTerminal(token, await service.submit(token, [table]));
    // The replica replays the first write (the primary is idle but for the queue's polls).
    for (let tries = 0; (await standbyName('table-1')) !== 'Oak table'; tries++) {
      assert.ok(tries < 100, 'the standby replays the first batch');
      await sleep(100);
    }

    await ask(pair.standbyUrl, 'SELECT pg_wal_replay_pause()');
    const walnut = { ...table, name: 'Walnut table' };
    const chair = product({
      external_id: 'chair-1',
      name: 'Walnut chair',
      variants: [variant({ sku: 'ch-1' })],
    });
    const batch = await service.submit(token, [walnut, chair]);
    assert.equal((await service.waitForTerminal(token, batch)).status, 'completed');
    assert.equal(await standbyName('table-1'), 'Oak table', 'the standby is behind: its replay is paused');
    assert.equal(await standbyName('chair-1'), null);

    /** The three reads a replica may serve, each right after the write, with how long each took. */
    const read = async () => {
      const timed = async (url: string, headers: Record<string, string> = {}) => {
        const started = performance.now();
        const res = await service.request({ method: 'GET', url, token, headers });
        assert.equal(res.statusCode, 200, res.body);
        return { res, ms: performance.now() - started };
      };
      const exported = await timed('/products/export', { accept: 'application/x-ndjson' });
      const searched = await timed('/products?q=walnut');
      const history = await timed('/products/table-1/history');
      return {
        exported: exported.res.body
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown),
        searched: searched.res.json<{ data: Array<{ external_id: string; name: string }>; total: number }>(),
        history: history.res
          .json<{ data: Array<{ action: string; batch_id: string; diff: unknown[] }> }>()
          .data.map(({ action, batch_id, diff }) => ({
            action,
            batch_id,
            diff: action === 'create' ? [] : diff,
          })),
        ms: [exported.ms, searched.ms, history.ms],
      };
    };
    const expected = {
      exported: [chair, walnut],
      searched: { names: ['Walnut chair', 'Walnut table'], total: 2 },
      history: [
        {
          action: 'update',
          batch_id: batch,
          diff: [{ path: 'name', op: 'change', from: 'Oak table', to: 'Walnut table' }],
        },
        { action: 'create', diff: [] },
      ],
    };
    const check = (got: Awaited<ReturnType<typeof read>>) => {
      assert.deepEqual(got.exported, expected.exported);
      assert.deepEqual(
        { names: got.searched.data.map((p) => p.name).sort(), total: got.searched.total },
        expected.searched,
      );
      assert.deepEqual(
        got.history.map(({ batch_id, ...entry }) =>
          entry.action === 'create' ? entry : { ...entry, batch_id },
        ),
        expected.history,
      );
    };

    type Outcomes = Record<string, number>;
    /**
     * The three reads, until where they went is what `served` asks. A read waits at most
     * REPLICA_CATCH_UP_MS for the replica's answer: a stall of this machine longer than that (CI
     * runs two test files at once on two cores) sends that read, and those of the next
     * REPLICA_SKIP_MS, to the primary, as it should. A try that `stalled` says shows such a stall
     * is made again after that second, a few times; any other try that `served` refuses fails the
     * test at once. What each try returns is checked every time.
     */
    const readUntil = async (
      what: string,
      { served, stalled }: { served: (o: Outcomes) => boolean; stalled: (o: Outcomes) => boolean },
    ) => {
      const tries: Outcomes[] = [];
      for (;;) {
        service.service.metrics.replicaReads.reset();
        const got = await read();
        check(got);
        const outcomes = await counted();
        tries.push(outcomes);
        if (served(outcomes)) return got;
        assert.ok(
          stalled(outcomes) && tries.length < 5,
          `${what}: not in ${tries.length} ${tries.length === 1 ? 'try' : 'tries'}, where the reads went in each: ${JSON.stringify(tries)}`,
        );
        await sleep(REPLICA_SKIP_MS);
      }
    };

    const scansBefore = await settledStandbyScans();
    // The export waits for the paused replica, then takes the primary; the reads after it skip the
    // replica, unless a stall put them past REPLICA_SKIP_MS, when they wait too. None reaches it. A
    // replica that answers no poll within the wait (a stall) counts as failed.
    const behind = await readUntil('the primary serves the reads while the replica is behind', {
      served: ({ behind: waited = 0, skipped = 0, ...others }) =>
        waited >= 1 && waited + skipped === 3 && Object.keys(others).length === 0,
      stalled: ({ failed = 0, replica = 0 }) => failed > 0 && replica === 0,
    });
    // The wait gives up at the last poll of the replica that fits within it.
    assert.ok(behind.ms[0]! >= REPLICA_CATCH_UP_MS - REPLICA_POLL_MS, `the export waited ${behind.ms[0]} ms`);
    assert.equal(await settledStandbyScans(), scansBefore, 'the standby read no products');

    await ask(pair.standbyUrl, 'SELECT pg_wal_replay_resume()');
    for (let tries = 0; (await standbyName('chair-1')) === null; tries++) {
      assert.ok(tries < 100, 'the standby replays the second batch once resumed');
      await sleep(100);
    }
    const scansCaughtUp = await settledStandbyScans();
    // The first read after the skip second asks the replica again; a stall makes it behind or failed.
    await sleep(REPLICA_SKIP_MS);
    await readUntil('the replica serves the three reads once it has replayed the write', {
      served: (outcomes) => isDeepStrictEqual(outcomes, { replica: 3 }),
      stalled: ({ behind = 0, failed = 0 }) => behind + failed > 0,
    });
    const [pool] = await ask<{ connections: string }>(
      pair.standbyUrl,
      `SELECT count(*)::text AS connections FROM pg_stat_activity
        WHERE application_name = '${REPLICA_READS_APPLICATION_NAME}'`,
    );
    assert.ok(Number(pool?.connections) >= 1, 'the service’s replica pool is connected to the standby');
    assert.ok((await settledStandbyScans()) > scansCaughtUp, 'the standby read the products');
  });
});
