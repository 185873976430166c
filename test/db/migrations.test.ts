import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { storeBatch } from '../helpers/stored-batch.ts';
import { readMigrations } from '../../src/db/migrate.ts';

/** What the migrations leave behind that a client cannot see: how batch bodies are stored. */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

void describe('migration 003: batch bodies', () => {
  void test('are lz4-compressed on a server and stored uncompressed on PGlite, and read back as sent', async () => {
    const { db } = svc.service;
    const tenant = svc.tenant('storage');
    const items = Array.from({ length: 40 }, () => product());
    // Stored with no job, so that no worker ends the batch (and drops its body) under the test.
    const batchId = await storeBatch(db, tenant, items);

    const [column] = await db.query<{ storage: string; compression: string }>(
      `SELECT attstorage AS storage, attcompression::text AS compression
       FROM pg_attribute WHERE attrelid = 'batch_payloads'::regclass AND attname = 'body'`,
    );
    const [stored] = await db.query<{ compression: string | null; body: string }>(
      `SELECT pg_column_compression(body) AS compression, body FROM batch_payloads
       WHERE tenant_id = $1 AND batch_id = $2`,
      [tenant, batchId],
    );
    if (db.kind === 'server') {
      assert.deepEqual(column, { storage: 'x', compression: 'l' });
      assert.equal(stored?.compression, 'lz4');
    } else {
      assert.deepEqual(column, { storage: 'e', compression: '' });
      assert.equal(stored?.compression, null);
    }
    assert.deepEqual(JSON.parse(stored?.body ?? 'null'), { items });
  });
});

void describe('migration 004: bodies of ended batches', () => {
  void test('are deleted, and the bodies of batches still to run are kept', async () => {
    const { db } = svc.service;
    const tenant = svc.tenant('ended-bodies');
    const ids: Record<string, string> = {};
    for (const status of ['accepted', 'processing', 'completed', 'completed_with_errors', 'failed']) {
      ids[status] = await storeBatch(db, tenant, [product()]);
      await db.query('UPDATE batches SET status = $3 WHERE tenant_id = $1 AND id = $2', [
        tenant,
        ids[status],
        status,
      ]);
    }
    const migration = (await readMigrations()).find((m) => m.version === 4)!;
    assert.equal(migration.name, 'drop_ended_bodies');
    await db.exec(migration.sql);

    const kept = await db.query<{ batch_id: string }>(
      'SELECT batch_id::text FROM batch_payloads WHERE tenant_id = $1',
      [tenant],
    );
    assert.deepEqual(kept.map((row) => row.batch_id).sort(), [ids.accepted, ids.processing].sort());
  });
});
