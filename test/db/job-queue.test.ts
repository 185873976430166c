import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import type { IngestJob } from '../../src/queue/job-queue.ts';
import { startJobQueue, type JobQueue } from '../../src/queue/job-queue.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

/** The queue's wake path: a job sent by this process starts at once, not at the next poll. */

let svc: TestService;
let queue: JobQueue | undefined;

before(async () => {
  // An API-only service runs no worker: the loop started below is the only one taking jobs.
  svc = await startTestService({ ROLE: 'api' });
});
after(async () => {
  await queue?.stop(1_000);
  await svc?.stop();
});

void test('nudge() starts a job sent while the loop sleeps out its polling interval', async () => {
  const { config, db } = svc.service;
  // The service's own queue schema (already created), polled rarely: only a nudge starts a job early.
  const schema = config.databaseUrl ? `${config.databaseSchema}_jobs` : 'pgboss';
  queue = await startJobQueue(db, { schema, pollingIntervalSeconds: 30 });
  const handled: IngestJob[] = [];
  const waiters: Array<() => void> = [];
  const handledCount = (n: number, withinMs: number) =>
    Promise.race([
      new Promise<boolean>((resolve) => {
        const check = () => (handled.length >= n ? resolve(true) : waiters.push(check));
        check();
      }),
      sleep(withinMs).then(() => false),
    ]);
  const first: IngestJob = { tenantId: 'tenant-a', batchId: 'batch-1' };
  const second: IngestJob = { tenantId: 'tenant-a', batchId: 'batch-2' };

  // Sent before the loop starts, the first job is found by the loop's first fetch.
  await queue.send(first);
  await queue.work(1, async (job) => {
    handled.push(job);
    for (const wake of waiters.splice(0)) wake();
  });
  assert.equal(await handledCount(1, 10_000), true, 'the first job was not handled');
  // After a job the loop fetches again at once, finds nothing and sleeps for 30 s.
  await sleep(2_000);

  await queue.send(second);
  assert.equal(await handledCount(2, 1_500), false, 'the sleeping loop took a job without a nudge');
  queue.nudge();
  assert.equal(await handledCount(2, 5_000), true, 'the nudged loop did not take the job');
  assert.deepEqual(handled, [first, second]);
});
