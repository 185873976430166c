import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Config } from '../../src/config.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

/**
 * A submission wakes its own process's idle workers, so the batch starts now rather than at their
 * next poll. With the poll an hour away (no setting allows that), only that wake can get a batch
 * processed.
 */

const pollHourly = (config: Config): Config => ({
  ...config,
  worker: { ...config.worker, pollMs: 3_600_000 },
});

async function submitAndFinish(svc: TestService): Promise<void> {
  const tenant = svc.tenant('wake');
  const token = await svc.token(tenant);
  for (let round = 0; round < 2; round++) {
    const batchId = await svc.submit(token, [product(), product()]);
    const record = await svc.waitForTerminal(token, batchId, 15_000);
    assert.deepEqual(
      { status: record.status, upserted: record.upserted, failed: record.failed },
      { status: 'completed', upserted: 2, failed: 0 },
    );
  }
}

void describe('the worker on the API thread', () => {
  let svc: TestService;
  before(async () => {
    svc = await startTestService({ WORKER_THREAD: 'false' }, pollHourly);
  });
  after(async () => {
    await svc?.stop();
  });

  void test('is woken by each submission (its queue is nudged)', async () => {
    assert.notEqual(svc.service.worker, null);
    await submitAndFinish(svc);
  });
});

void describe(
  'the worker in its own thread',
  { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
  () => {
    let svc: TestService;
    before(async () => {
      svc = await startTestService({ WORKER_THREAD: 'true' }, pollHourly);
    });
    after(async () => {
      await svc?.stop();
    });

    void test('is woken by each submission (a message from the API thread)', async () => {
      assert.notEqual(svc.service.workerThread, null);
      await submitAndFinish(svc);
    });
  },
);
