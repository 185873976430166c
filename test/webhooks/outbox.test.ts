import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { product } from '../helpers/catalog-fixtures.ts';
import { storeBatch } from '../helpers/stored-batch.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { giveUpBatch } from '../../src/ingestion/batches/batch-progress.repository.ts';
import { recordDeliveriesSql } from '../../src/webhooks/delivery.repository.ts';

/**
 * docs/reference.md §10.1: "The delivery is recorded in the same transaction that makes the batch terminal."
 * The statement that ends a batch is driven here by hand, inside transactions the test commits or
 * rolls back. (The service's worker is told nothing of these batches: they have no queue job.)
 */

let svc: TestService;

before(async () => {
  // Private hosts allowed, so the endpoints below are accepted; nothing listens at their URL.
  svc = await startTestService({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_RETRY_SCHEDULE: '3600' });
});

after(async () => {
  await svc?.stop();
});

const countDeliveries = async (tenantId: string, batchId: string) =>
  (
    await svc.service.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1 AND batch_id = $2`,
      [tenantId, batchId],
    )
  )[0]!.n;

async function endpoint(token: string, events?: string[]): Promise<void> {
  const res = await svc.request({
    method: 'POST',
    url: '/webhook-endpoints',
    token,
    json: { url: 'http://127.0.0.1:9/hooks', ...(events ? { events } : {}) },
  });
  assert.equal(res.statusCode, 201, res.body);
}

describe('the outbox', () => {
  test('rolled back with the end of the batch, committed with it, and once only', async () => {
    const tenant = svc.tenant();
    const token = await svc.token(tenant);
    await endpoint(token);
    await endpoint(token, ['batch.failed']);
    await endpoint(token, ['batch.completed']);
    const { db } = svc.service;
    const batchId = await storeBatch(db, tenant, [product()]);
    const end = { tenantId: tenant, batchId, failedCount: 1, unvalidated: true };

    await assert.rejects(
      db.transaction(async (tx) => {
        assert.equal(await giveUpBatch(tx, end, recordDeliveriesSql), 'failed');
        const inside = await tx.query(
          `SELECT 1 FROM webhook_deliveries WHERE tenant_id = $1 AND batch_id = $2`,
          [tenant, batchId],
        );
        assert.equal(inside.length, 2, 'recorded by the statement that ended the batch');
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.equal(await countDeliveries(tenant, batchId), 0);

    assert.equal(await db.transaction((tx) => giveUpBatch(tx, end, recordDeliveriesSql)), 'failed');
    // Two endpoints subscribe to batch.failed; the third only to batch.completed.
    const rows = await db.query<{ event: string; status: string }>(
      `SELECT event, status FROM webhook_deliveries WHERE tenant_id = $1 AND batch_id = $2`,
      [tenant, batchId],
    );
    assert.deepEqual(rows, [
      { event: 'batch.failed', status: 'pending' },
      { event: 'batch.failed', status: 'pending' },
    ]);

    // A second end of an ended batch ends nothing and records nothing.
    assert.equal(await db.transaction((tx) => giveUpBatch(tx, end, recordDeliveriesSql)), null);
    assert.equal(await countDeliveries(tenant, batchId), 2);
  });

  test('a batch processed by the worker gets one delivery per subscribed endpoint', async () => {
    const tenant = svc.tenant();
    const token = await svc.token(tenant);
    await endpoint(token);
    await endpoint(token, ['batch.completed_with_errors']);
    const batchId = await svc.submit(token, [product()]);
    await svc.waitForTerminal(token, batchId);
    assert.equal(await countDeliveries(tenant, batchId), 1);
  });
});
