import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../src/db/database.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { holdingTenant } from '../helpers/stored-batch.ts';
import { plannedScans } from '../helpers/query-plans.ts';
import { findBatch, type BatchKey } from '../../src/ingestion/batches/batch.repository.ts';
import {
  advanceBatch,
  countBatchAttempt,
  finishBatch,
  giveUpBatch,
  lockUnfinishedBatch,
  recordJudgement,
  refundBatchAttempt,
} from '../../src/ingestion/batches/batch-progress.repository.ts';
import { insertSerializedHistory, serializeEntries } from '../../src/catalog/history.repository.ts';
import { recordDeliveriesSql } from '../../src/webhooks/delivery.repository.ts';

/**
 * The statements on one batch (src/db/hidden-tenant.ts) use the primary key also for a tenant the
 * table's statistics do not hold yet: one that started after the last ANALYZE of `batches`, beside
 * a tenant that ANALYZE saw. Seeing such a tenant, estimated at one row, the planner took
 * `batches_by_tenant` or `batches_by_tenant_created` (or `batches_unfinished`, where the statement
 * names unfinished states) and read every batch of the tenant in that index. With the tenant as a
 * plain `$1` this test fails on both databases: PGlite took `batches_by_tenant`, the server
 * `batches_by_tenant_created`, and both `batches_unfinished`.
 */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * Stores `count` batches of `tenant` by SQL (the service is not the subject), ids `id(1)`…: ended
 * ones, and the last `unfinished` accepted (touched now, so no sweep takes them for stale ones).
 */
async function storeBatches(tenant: string, count: number, unfinished: number): Promise<void> {
  await svc.service.db.query(
    `INSERT INTO batches (tenant_id, id, status, received_count, upserted, next_index, label, created_at, updated_at)
     SELECT $1, ('00000000-0000-4000-8000-' || lpad(g::text, 12, '0'))::uuid,
            CASE WHEN g > $2::int - $3::int THEN 'accepted' ELSE 'completed' END, 2,
            CASE WHEN g > $2::int - $3::int THEN 0 ELSE 2 END, CASE WHEN g > $2::int - $3::int THEN 0 ELSE 2 END,
            'file.csv ' || g, now(), now()
     FROM generate_series(1, $2::int) AS g`,
    [tenant, count, unfinished],
  );
}

void test('statements on one batch use the primary key for a tenant the statistics do not hold yet', async () => {
  const db = svc.service.db;
  // Autovacuum would analyze the new tenant's batches sooner or later; the plan must not depend on it.
  await db.exec('ALTER TABLE batches SET (autovacuum_enabled = false)');
  try {
    await storeBatches('seen', 10_000, 10);
    await db.exec('ANALYZE batches');
    // Held, so that the service's worker, should it look for the tenant's unfinished batches, leaves them be.
    await holdingTenant(db, 'new', async () => {
      // 'new' started after the ANALYZE, with 3,000 batches, the last 1,000 of them still waiting.
      await storeBatches('new', 3_000, 1_000);
      const a: BatchKey = { tenantId: 'new', batchId: id(2_100) };
      const b: BatchKey = { tenantId: 'new', batchId: id(2_200) };
      const ended: BatchKey = { tenantId: 'new', batchId: id(5) };
      const judged = { validCount: 2, failures: [] };
      const step = { ...a, fromIndex: 0, toIndex: 2, upserted: 2, failed: 0 };
      const onEnd = recordDeliveriesSql;
      const history = serializeEntries([
        { external_id: 'p-1', ordinal: 1, action: 'create', item_index: 0, diff: [] },
      ]);

      const statements: Record<string, (q: Queryable) => Promise<unknown>> = {
        findBatch: (q) => findBatch(q, ended.tenantId, ended.batchId),
        countBatchAttempt: (q) => countBatchAttempt(q, a),
        refundBatchAttempt: (q) => refundBatchAttempt(q, a),
        recordJudgement: (q) => recordJudgement(q, a, judged),
        advanceBatch: (q) => advanceBatch(q, step),
        lockUnfinishedBatch: (q) => lockUnfinishedBatch(q, a),
        finishBatch: (q) => finishBatch(q, a, onEnd),
        giveUpBatch: (q) => giveUpBatch(q, { ...b, failedCount: 2, unvalidated: true }, onEnd),
        historyLabel: (q) => insertSerializedHistory(q, ended, history),
      };
      const plans: Record<string, string[]> = {};
      for (const [name, run] of Object.entries(statements))
        plans[name] = await plannedScans(db, 'batches', run);
      assert.deepEqual(
        plans,
        Object.fromEntries(Object.keys(statements).map((name) => [name, ['batches_pkey']])),
      );

      // And each finds its batch, and that one only.
      assert.deepEqual(
        await findBatch(db, ended.tenantId, ended.batchId).then(
          (row) => row && [row.batch_id, row.status, row.label],
        ),
        [id(5), 'completed', 'file.csv 5'],
      );
      assert.equal(await findBatch(db, 'new', id(3_001)), null);
      const counted = await countBatchAttempt(db, a);
      assert.deepEqual(counted && [counted.batch_id, counted.status, counted.attempts], [
        id(2_100),
        'validating',
        1,
      ]);
      await refundBatchAttempt(db, a);
      assert.equal((await findBatch(db, a.tenantId, a.batchId))?.attempts, 0);
      assert.equal(await recordJudgement(db, a, judged), true);
      assert.deepEqual(await advanceBatch(db, step), { upserted: 2, failed: 0 });
      assert.deepEqual(await db.transaction((tx) => lockUnfinishedBatch(tx, a)), {
        status: 'processing',
        next_index: 2,
        received_count: 2,
      });
      await insertSerializedHistory(db, a, history);
      assert.deepEqual(await db.query(`SELECT label FROM product_history WHERE tenant_id = 'new'`), [
        { label: 'file.csv 2100' },
      ]);
      assert.equal(await finishBatch(db, a, onEnd), 'completed');
      assert.equal(await giveUpBatch(db, { ...b, failedCount: 2, unvalidated: true }, onEnd), 'failed');
      assert.deepEqual(
        await db.query(
          `SELECT id::text AS id, status FROM batches WHERE tenant_id = 'new' AND updated_at > created_at ORDER BY id`,
        ),
        [
          { id: id(2_100), status: 'completed' },
          { id: id(2_200), status: 'failed' },
        ],
      );
    });
  } finally {
    await db.exec('ALTER TABLE batches RESET (autovacuum_enabled)');
  }
});
