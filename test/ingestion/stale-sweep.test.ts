import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { storeBatch } from '../helpers/stored-batch.ts';
import { startSecondWorker } from '../helpers/second-worker.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { batchStatus, countersOf, waitTerminal } from '../helpers/state-assertions.ts';
import { startBatchRun } from '../../src/ingestion/batch-progress.repository.ts';
import { STALE_AFTER_SECONDS, type BatchWorker } from '../../src/ingestion/batch-worker.ts';

/**
 * CONTRACT §5: a batch whose worker died mid-way is resumed by another worker within 2 minutes,
 * even when its job is gone too. A second worker (its own pg-boss on the same queue, as a second
 * process would have) starts before the orphans exist, so only its periodic sweep can find them.
 * Both poll the queue once an hour (no setting allows that): the sweep must wake its own worker.
 */

const HOUR_SECONDS = 3600;

let svc: TestService;
let worker: BatchWorker;

before(async () => {
  svc = await startTestService({}, (config) => ({
    ...config,
    worker: { ...config.worker, pollMs: HOUR_SECONDS * 1000 },
  }));
  worker = await startSecondWorker(svc, { sweepIntervalMs: 200 });
});

after(async () => {
  await worker?.stop(5_000);
  await svc?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A batch as a worker that died just after taking it leaves it: run counted, no job, untouched since `ageSeconds`. */
async function orphan(tenant: string, items: unknown[], ageSeconds: number): Promise<string> {
  const { db } = svc.service;
  const batchId = await storeBatch(db, tenant, items);
  assert.notEqual(await startBatchRun(db, tenant, batchId), null);
  await db.query(
    `UPDATE batches SET updated_at = now() - make_interval(secs => $3) WHERE tenant_id = $1 AND id = $2`,
    [tenant, batchId, ageSeconds],
  );
  return batchId;
}

test('the sweep resumes a batch left stale by a dead worker, and leaves a recently touched one alone', async () => {
  const staleTenant = svc.tenant('stale');
  const busyTenant = svc.tenant('busy');
  const items = [product(), product({ type: 'Spaceships' }), product()];
  // Another worker may still be on this one: touched just now.
  const busyId = await orphan(busyTenant, [product()], 0);
  const staleId = await orphan(staleTenant, items, STALE_AFTER_SECONDS + 5);

  const staleToken = await svc.token(staleTenant);
  const record = await waitTerminal(svc, staleToken, staleId, 20_000);
  assert.deepEqual(countersOf(record), {
    status: 'completed_with_errors',
    received_count: 3,
    validated_ok: 2,
    validated_failed: 1,
    upserted: 2,
    failed: 1,
  });
  const errors = await svc.allErrors(staleToken, staleId);
  assert.deepEqual(
    errors.map((e) => [e.index, (e.errors as Array<{ field: string }>)[0]?.field]),
    [[1, 'type']],
  );

  // Several sweeps later, the recently touched batch is still where its worker left it.
  await sleep(1_000);
  assert.deepEqual(countersOf(await batchStatus(svc, await svc.token(busyTenant), busyId)), {
    status: 'validating',
    received_count: 1,
    validated_ok: 0,
    validated_failed: 0,
    upserted: 0,
    failed: 0,
  });
});
