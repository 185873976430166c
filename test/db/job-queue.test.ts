/** The queue's wake path: a job sent by this process starts at once, not at the next poll. */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import type { Database } from '../../src/db/database.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';
import { startJobQueue, throttleErrors, type IngestJob, type JobQueue } from '../../src/queue/job-queue.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

let svc: TestService;
let queue: JobQueue | undefined;
let failingQueue: JobQueue | undefined;

before(async () => {
  // An API-only service runs no worker: the loop started below is the only one taking jobs.
  svc = await startTestService({ ROLE: 'api' });
});
after(async () => {
  try {
    await queue?.stop(1_000);
    await failingQueue?.stop(1_000);
  } finally {
    await svc.stop();
  }
});

/** True once `condition` holds, false if it does not within `ms`. */
async function holdsWithin(ms: number, condition: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
  return true;
}

/** `db` with each `query` passed through `intercept`, which decides whether and how it runs. */
function interceptQueries(
  db: Database,
  intercept: (run: () => Promise<unknown[]>, text: string) => Promise<unknown[]>,
): Database {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'query') {
        return (text: string, values?: unknown[]) => intercept(() => target.query(text, values), text);
      }
      const value = Reflect.get(target, property) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `db`, counting pg-boss's job fetches that came back empty (its only `SKIP LOCKED` query). */
function countingEmptyFetches(db: Database): { db: Database; emptyFetches: () => number } {
  let empty = 0;
  const watched = interceptQueries(db, async (run, text) => {
    const rows = await run();
    if (text.includes('SKIP LOCKED') && rows.length === 0) empty++;
    return rows;
  });
  return { db: watched, emptyFetches: () => empty };
}

void test('wake() starts a job sent while the loop sleeps out its polling interval', async () => {
  const { db, emptyFetches } = countingEmptyFetches(svc.service.db);
  // The service's own queue schema (already created), polled rarely: only a wake starts a job early.
  queue = await startJobQueue(db, { schema: svc.service.queue.schema, pollingIntervalSeconds: 30 });
  const handled: IngestJob[] = [];
  const first: IngestJob = { tenantId: 'tenant-a', batchId: 'batch-1' };
  const second: IngestJob = { tenantId: 'tenant-a', batchId: 'batch-2' };

  // Sent before the loop starts, the first job is found by the loop's first fetch.
  await queue.send(first);
  await queue.work(1, async (job) => {
    handled.push(job);
  });
  assert.equal(await holdsWithin(10_000, () => handled.length === 1), true, 'the first job was not handled');
  // After a job the loop fetches again at once; once that fetch comes back empty it sleeps for 30 s.
  assert.equal(await holdsWithin(10_000, () => emptyFetches() >= 1), true, 'the loop did not fetch again');

  await queue.send(second);
  assert.equal(
    await holdsWithin(1_500, () => handled.length === 2),
    false,
    'the sleeping loop took a job without a wake',
  );
  queue.wake();
  assert.equal(
    await holdsWithin(5_000, () => handled.length === 2),
    true,
    'the woken loop did not take the job',
  );
  assert.deepEqual(handled, [first, second]);
});

void test('a job sent with startAfterSeconds is not taken before then, and is once due', async () => {
  // The worker sends the tenant of a drain whose lock was lost this way (src/worker/batch-worker.ts).
  await queue?.stop(1_000);
  queue = await startJobQueue(svc.service.db, {
    schema: svc.service.queue.schema,
    pollingIntervalSeconds: 30,
  });
  const handled: IngestJob[] = [];
  await queue.work(1, async (job) => {
    handled.push(job);
  });
  const job: IngestJob = { tenantId: 'tenant-later', batchId: null };
  const sentAt = Date.now();
  await queue.send(job, { startAfterSeconds: 3 });
  // Woken at once, the loop fetches, finds nothing due, and sleeps out its 30 s.
  queue.wake();
  assert.equal(await holdsWithin(1_000, () => handled.length > 0), false, 'taken before its start');
  await sleep(Math.max(0, sentAt + 3_200 - Date.now()));
  queue.wake();
  assert.equal(await holdsWithin(5_000, () => handled.length > 0), true, 'not taken once due');
  assert.deepEqual(handled, [job]);
});

void test("pg-boss's own failures reach onError instead of vanishing", async () => {
  let failing = false;
  const db = interceptQueries(svc.service.db, (run) =>
    failing ? Promise.reject(new Error('connection to the database was lost')) : run(),
  );
  const errors: unknown[] = [];
  failingQueue = await startJobQueue(db, {
    schema: svc.service.queue.schema,
    maintenanceIntervalSeconds: 1,
    onError: (error) => errors.push(error),
  });
  failing = true;
  assert.equal(await holdsWithin(10_000, () => errors.length > 0), true, 'no error was reported');
  assert.equal((errors[0] as Error).message, 'connection to the database was lost');
});

void test('a job completion the database refuses is reported, not an unhandled rejection', async () => {
  // pg-boss completes and fails jobs without awaiting the write: on a read-only database the
  // rejection went unhandled, which ends a Node process.
  // The first test's loop would take jobs too: only this test's loop may.
  await queue?.stop(1_000);
  queue = undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    let refusing = false;
    const readOnly = () =>
      Object.assign(new Error('cannot execute UPDATE in a read-only transaction'), { code: '25006' });
    const db = interceptQueries(svc.service.db, (run, text) =>
      refusing && /SET completed_on|DELETE FROM/.test(text) ? Promise.reject(readOnly()) : run(),
    );
    const errors: unknown[] = [];
    const refused = await startJobQueue(db, {
      schema: svc.service.queue.schema,
      onError: (error) => errors.push(error),
    });
    const handled: string[] = [];
    try {
      await refused.work(1, async (job) => {
        handled.push(job.tenantId);
        refusing = true;
        if (job.tenantId === 'refused-fail') throw new Error('the handler failed');
      });
      for (const tenantId of ['refused-complete', 'refused-fail']) {
        refusing = false;
        const before = errors.length;
        await refused.send({ tenantId, batchId: null });
        refused.wake();
        assert.equal(await holdsWithin(10_000, () => errors.length > before), true, `${tenantId}: no report`);
        assert.equal((errors[errors.length - 1] as { code?: string }).code, '25006');
      }
      assert.deepEqual(handled, ['refused-complete', 'refused-fail']);
      await sleep(200);
      assert.deepEqual(unhandled, []);
    } finally {
      refusing = false;
      await refused.stop(1_000);
    }
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

void test('a queue whose set-up fails stops pg-boss instead of leaving it polling', async () => {
  let setUpFailed = false;
  let queriesAfterwards = 0;
  const db = interceptQueries(svc.service.db, (run, text) => {
    if (setUpFailed) queriesAfterwards++;
    return text.includes('create_queue(') ? Promise.reject(new Error('could not create the queue')) : run();
  });
  await assert.rejects(
    startJobQueue(db, { schema: svc.service.queue.schema, maintenanceIntervalSeconds: 1 }),
    /could not create the queue/,
  );
  setUpFailed = true;
  // A pg-boss left running would look for expired jobs every second.
  await sleep(2_500);
  assert.equal(queriesAfterwards, 0);
});

void test('throttleErrors passes one error a minute and counts those it held back', () => {
  let now = 0;
  const reported: Array<[unknown, number]> = [];
  const report = throttleErrors((error, heldBack) => reported.push([error, heldBack]), {
    now: () => now,
  });
  report('a');
  now = 30_000;
  report('b');
  report('c');
  now = 59_999;
  report('d');
  assert.deepEqual(reported, [['a', 0]]);
  now = 60_000;
  report('e');
  now = 200_000;
  report('f');
  assert.deepEqual(reported, [
    ['a', 0],
    ['e', 3],
    ['f', 0],
  ]);
});

void test(
  'processes starting together on a new database set the queue up without deadlocking',
  { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL: PGlite serves one process' },
  async () => {
    const url = process.env.TEST_DATABASE_URL!;
    // Four processes' worth of pools, six fresh schemas: before the set-up lock, about one start in
    // four died with 40P01 in pg-boss's createQueue.
    for (let round = 0; round < 6; round++) {
      const schema = `test_jobs_${randomBytes(6).toString('hex')}`;
      const dbs = await Promise.all(Array.from({ length: 4 }, () => openServerDatabase(url, { max: 12 })));
      try {
        const starts = await Promise.allSettled(dbs.map((db) => startJobQueue(db, { schema })));
        for (const start of starts) if (start.status === 'fulfilled') await start.value.stop(100);
        assert.deepEqual(
          starts.filter((start) => start.status === 'rejected').map((start) => String(start.reason)),
          [],
        );
      } finally {
        await dbs[0]!.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await Promise.all(dbs.map((db) => db.close()));
      }
    }
  },
);
