import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';

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
    const token = await svc.token(tenant);
    const items = Array.from({ length: 40 }, () => product());
    const batchId = await svc.submit(token, items);

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
