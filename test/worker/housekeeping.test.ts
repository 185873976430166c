import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { holdingTenant, storeBatch } from '../helpers/stored-batch.ts';
import { startSecondWorker } from '../helpers/second-worker.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { batchStatus, assertCounters, countersOf, waitTerminal } from '../helpers/assertions.ts';
import { countBatchAttempt } from '../../src/ingestion/batches/batch-progress.repository.ts';
import type { BatchWorker } from '../../src/worker/batch-worker.ts';
import { STALE_AFTER_SECONDS } from '../../src/worker/housekeeping.ts';
import { deleteExpiredBatches } from '../../src/ingestion/batches/batch-retention.repository.ts';
import { deleteExpiredDeliveries } from '../../src/webhooks/delivery.repository.ts';
import type { Queryable } from '../../src/db/database.ts';

/** The worker's housekeeping (src/worker/housekeeping.ts): the stale sweep and retention, each on a service of its own. */

/**
 * docs/reference.md §5: a batch whose worker died mid-way is resumed by another worker within 2 minutes,
 * even when its job is gone too. A second worker (its own pg-boss on the same queue, as a second
 * process would have) starts before the orphans exist, so only its periodic sweep can find them.
 * Both poll the queue once an hour (no setting allows that): the sweep must wake its own worker.
 */
void describe('the stale sweep', () => {
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
    assert.notEqual(await countBatchAttempt(db, { tenantId: tenant, batchId }), null);
    await db.query(
      `UPDATE batches SET updated_at = now() - make_interval(secs => $3) WHERE tenant_id = $1 AND id = $2`,
      [tenant, batchId, ageSeconds],
    );
    return batchId;
  }

  void test('the sweep resumes a batch left stale by a dead worker, and leaves a recently touched one alone', async () => {
    const staleTenant = svc.tenant('stale');
    const busyTenant = svc.tenant('busy');
    const items = [product(), product({ type: 'Spaceships' }), product()];
    // Another worker may still be on this one: touched just now.
    const busyId = await orphan(busyTenant, [product()], 0);
    const staleId = await orphan(staleTenant, items, STALE_AFTER_SECONDS + 5);

    const staleToken = await svc.token(staleTenant);
    const record = await waitTerminal(svc, staleToken, staleId, 20_000);
    assertCounters(record, 'completed_with_errors', [3, 2, 1, 2, 1]);
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
});

/**
 * BATCH_RETENTION_DAYS: an ended batch, with its error records, is deleted once its last change is
 * that many days old; an unfinished batch and the catalog are kept however old.
 */
void describe('retention', () => {
  let svc: TestService;

  before(async () => {
    // The service's own worker keeps every batch: only the calls below delete any.
    svc = await startTestService({ BATCH_RETENTION_DAYS: '0' });
  });

  after(async () => {
    await svc?.stop();
  });

  const DAY_SECONDS = 86_400;

  /** Moves a batch's end (for an unfinished one, its last change) `seconds` into the past. */
  async function age(
    tenant: string,
    batchId: string,
    seconds: number,
    db: Queryable = svc.service.db,
  ): Promise<void> {
    await db.query(
      `UPDATE batches SET updated_at = updated_at - make_interval(secs => $3),
                          ended_at = ended_at - make_interval(secs => $3)
       WHERE tenant_id = $1 AND id = $2`,
      [tenant, batchId, seconds],
    );
  }

  /** What a client reads of a batch: its status code and the first page of its errors. */
  async function readable(token: string, batchId: string): Promise<[number, number]> {
    const status = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token });
    const errors = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}/errors`, token });
    return [status.statusCode, errors.statusCode];
  }

  async function errorRows(tenant: string, batchId: string): Promise<number> {
    const rows = await svc.service.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM batch_item_errors WHERE tenant_id = $1 AND batch_id = $2`,
      [tenant, batchId],
    );
    return rows[0]!.n;
  }

  /** A webhook endpoint of the tenant (it never hears of these tests' batches: it is made after them). */
  async function endpointOf(token: string): Promise<string> {
    const created = await svc.request({
      method: 'POST',
      url: '/webhook-endpoints',
      token,
      json: { url: 'https://hooks.example.com/in' },
    });
    assert.equal(created.statusCode, 201, created.body);
    return created.json<{ id: string }>().id;
  }

  /** A delivery in `status` created `ageDays` ago; a pending one is next due in a day. */
  async function storeDelivery(
    tenant: string,
    endpointId: string,
    status: 'pending' | 'delivered' | 'failed',
    ageDays: number,
  ): Promise<string> {
    const [row] = await svc.service.db.query<{ id: string }>(
      `INSERT INTO webhook_deliveries
         (tenant_id, id, endpoint_id, event, batch_id, status, next_attempt_at, payload, created_at)
       VALUES ($1, gen_random_uuid(), $2, 'batch.completed', gen_random_uuid(), $3,
               CASE WHEN $3 = 'pending' THEN now() + interval '1 day' END, '{}',
               now() - make_interval(days => $4))
       RETURNING id::text AS id`,
      [tenant, endpointId, status, ageDays],
    );
    return row!.id;
  }

  /** The ids in an endpoint's delivery log, as its owner reads it. */
  async function deliveryLog(token: string, endpointId: string): Promise<string[]> {
    const log = await svc.request({
      method: 'GET',
      url: `/webhook-endpoints/${endpointId}/deliveries?limit=100`,
      token,
    });
    assert.equal(log.statusCode, 200, log.body);
    return log
      .json<{ data: Array<{ id: string }> }>()
      .data.map((delivery) => delivery.id)
      .sort();
  }

  void test('ended webhook deliveries past the retention go; pending and younger ones stay', async () => {
    const tenant = svc.tenant('retention-deliveries');
    const token = await svc.token(tenant);
    const endpointId = await endpointOf(token);
    await storeDelivery(tenant, endpointId, 'delivered', 31);
    await storeDelivery(tenant, endpointId, 'failed', 31);
    const pending = await storeDelivery(tenant, endpointId, 'pending', 31);
    const young = await storeDelivery(tenant, endpointId, 'failed', 29);

    assert.equal(await deleteExpiredDeliveries(svc.service.db, 30), 2);

    assert.deepEqual(await deliveryLog(token, endpointId), [pending, young].sort());
  });

  void test('an ended batch past its retention goes with its errors; a younger one and an unfinished one stay', async () => {
    const tenant = svc.tenant('retention');
    const other = svc.tenant('retention-other');
    const token = await svc.token(tenant);
    const otherToken = await svc.token(other);

    const old = await svc.submit(token, [
      product({ external_id: 'kept-product' }),
      product({ type: 'Rocket' }),
    ]);
    const young = await svc.submit(token, [product({ type: 'Rocket' })]);
    const othersOld = await svc.submit(otherToken, [product({ type: 'Rocket' })]);
    for (const [t, id] of [
      [token, old],
      [token, young],
      [otherToken, othersOld],
    ] as const) {
      assert.equal(
        (await svc.waitForTerminal(t, id)).status,
        id === old ? 'completed_with_errors' : 'failed',
      );
    }
    await age(tenant, old, 30 * DAY_SECONDS + 60);
    await age(tenant, young, 30 * DAY_SECONDS - 60);
    await age(other, othersOld, 31 * DAY_SECONDS);
    assert.equal(await errorRows(tenant, old), 1);

    // Two unfinished batches, stored and read with the tenant held: the worker ending this tenant's
    // drain looks once more for its unfinished batches, and would run them.
    const db = svc.service.db;
    const { unfinished, reopened, statuses } = await holdingTenant(db, tenant, async () => {
      // Never run (no job was sent for it), and older than any retention: still to be processed.
      const unfinished = await storeBatch(db, tenant, [product()]);
      // As a repair that reopened a batch would leave it: unfinished, its old end still set.
      const reopened = await storeBatch(db, tenant, [product()]);
      // They are aged, the deletion run and their statuses read in one transaction: a batch
      // untouched for a year is stale, and the service's worker would resume it at its next sweep
      // (every 30 s), maybe between the ageing and the reading.
      const statuses = await db.transaction(async (tx) => {
        await age(tenant, unfinished, 365 * DAY_SECONDS, tx);
        await tx.query(
          `UPDATE batches SET ended_at = now() - interval '365 days' WHERE tenant_id = $1 AND id = $2`,
          [tenant, reopened],
        );
        await deleteExpiredBatches(tx, 30);
        return tx.query<{ status: string }>(
          `SELECT status FROM batches WHERE tenant_id = $1 AND id IN ($2, $3)`,
          [tenant, unfinished, reopened],
        );
      });
      return { unfinished, reopened, statuses };
    });
    assert.deepEqual(
      statuses.map((row) => row.status),
      ['accepted', 'accepted'],
    );

    assert.deepEqual(await readable(token, old), [404, 404]);
    assert.equal(await errorRows(tenant, old), 0);
    assert.deepEqual(await readable(otherToken, othersOld), [404, 404]);
    assert.deepEqual(await readable(token, young), [200, 200]);
    assert.equal(await errorRows(tenant, young), 1);
    for (const id of [unfinished, reopened]) {
      const kept = await svc.request({ method: 'GET', url: `/products/ingestions/${id}`, token });
      assert.equal(kept.statusCode, 200);
    }
    // The catalog the batch wrote is the tenant's, not the batch's.
    const written = await svc.request({ method: 'GET', url: '/products/kept-product', token });
    assert.equal(written.statusCode, 200);
    // The list no longer shows it either.
    const list = await svc.request({ method: 'GET', url: '/products/ingestions?limit=100', token });
    assert.deepEqual(
      list
        .json<{ data: Array<{ batch_id: string }> }>()
        .data.map((b) => b.batch_id)
        .sort(),
      [young, unfinished, reopened].sort(),
    );
  });

  void test('more expired batches than one statement deletes are all deleted in one call', async () => {
    const tenant = svc.tenant('retention-many');
    const token = await svc.token(tenant);
    const ids: string[] = [];
    for (let i = 0; i < 230; i++) ids.push(await storeBatch(svc.service.db, tenant, [product()]));
    await svc.service.db.query(
      `UPDATE batches SET status = 'completed', updated_at = now() - interval '8 days',
                          ended_at = now() - interval '8 days'
       WHERE tenant_id = $1`,
      [tenant],
    );
    // Batches of other tests that ended over 7 days ago go too: count them as the call will.
    const [others] = await svc.service.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM batches WHERE tenant_id <> $1 AND ended_at < now() - interval '7 days'
         AND status IN ('completed', 'completed_with_errors', 'failed')`,
      [tenant],
    );
    assert.equal(await deleteExpiredBatches(svc.service.db, 7), 230 + others!.n);
    const rows = await svc.service.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM batches WHERE tenant_id = $1`,
      [tenant],
    );
    assert.equal(rows[0]!.n, 0);
    assert.equal(
      (await svc.request({ method: 'GET', url: `/products/ingestions/${ids[0]}`, token })).statusCode,
      404,
    );
  });

  void test("the worker's sweep applies BATCH_RETENTION_DAYS to batches and deliveries, and 0 keeps them all", async () => {
    const tenant = svc.tenant('retention-sweep');
    const token = await svc.token(tenant);
    const batchId = await svc.submit(token, [product()]);
    assert.equal((await svc.waitForTerminal(token, batchId)).status, 'completed');
    await age(tenant, batchId, 3 * DAY_SECONDS);
    const endpointId = await endpointOf(token);
    const delivery = await storeDelivery(tenant, endpointId, 'delivered', 3);

    // The sweep a worker runs as it starts.
    const keeping = await startSecondWorker(svc, { batchRetentionDays: 0 });
    await keeping.stop(5_000);
    assert.equal(
      (await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token })).statusCode,
      200,
    );
    assert.deepEqual(await deliveryLog(token, endpointId), [delivery]);

    const deleting = await startSecondWorker(svc, { batchRetentionDays: 2 });
    // The deletion runs beside the worker's start, and a stop lets it finish what it has begun but
    // begin nothing more: wait for the deliveries, which it deletes after the batches.
    for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
      if ((await deliveryLog(token, endpointId)).length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await deleting.stop(5_000);
    assert.equal(
      (await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token })).statusCode,
      404,
    );
    // The deliveries' retention is the batches': the same sweep deleted the delivery.
    assert.deepEqual(await deliveryLog(token, endpointId), []);
  });
});
