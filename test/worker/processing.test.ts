import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storedBatchService } from '../helpers/stored-batch.ts';
import { errorShapes, product, skuOf, thief, withoutName } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertProgression,
  assertRecordInvariants,
  batchStatus,
  assertCounters,
  ingest,
  TERMINAL,
  waitTerminal,
  type StatusRecord,
} from '../helpers/assertions.ts';
import { NEEDS_SERVER, startSharedServices } from '../helpers/state-shared-schema.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';

/** CONTRACT §5 states, counters and at-least-once processing, §6 the status record. */

const fixture = storedBatchService();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

void describe('terminal states and exact counters', () => {
  void test('all items valid → completed', async () => {
    const token = await fixture.svc.token(fixture.svc.tenant());
    const final = await ingest(fixture.svc, token, [product(), product(), product()]);
    assertRecordInvariants(final, 3);
    assertCounters(final, 'completed', [3, 3, 0, 3, 0]);
    const errors = await fixture.svc.request({
      method: 'GET',
      url: `/products/ingestions/${final.batch_id}/errors`,
      token,
    });
    assert.deepEqual(errors.json(), { data: [], next_cursor: null });
  });

  void test('some items fail (validation and sku_conflict) → completed_with_errors', async () => {
    const token = await fixture.svc.token(fixture.svc.tenant());
    const owner = product();
    const items = [owner, withoutName(), product(), thief(skuOf(owner)), 'not an object'];
    const final = await ingest(fixture.svc, token, items);
    assertRecordInvariants(final, 5);
    assertCounters(final, 'completed_with_errors', [5, 3, 2, 2, 3]);
    assert.deepEqual(errorShapes(await fixture.svc.allErrors(token, final.batch_id)), [
      {
        index: 1,
        external_id: (items[1] as Record<string, unknown>).external_id,
        sku: skuOf(items[1] as Record<string, unknown>),
        errors: [{ field: 'name', code: 'required' }],
      },
      {
        index: 3,
        external_id: (items[3] as Record<string, unknown>).external_id,
        sku: skuOf(owner),
        errors: [{ field: 'variants[0].sku', code: 'sku_conflict' }],
      },
      { index: 4, external_id: null, sku: null, errors: [{ field: '', code: 'invalid_type' }] },
    ]);
  });

  void test('every item invalid → failed, with validated_failed = failed = received_count', async () => {
    const token = await fixture.svc.token(fixture.svc.tenant());
    const final = await ingest(fixture.svc, token, [withoutName(), 42, null, withoutName()]);
    assertRecordInvariants(final, 4);
    assertCounters(final, 'failed', [4, 0, 4, 0, 4]);
    assert.deepEqual(
      (await fixture.svc.allErrors(token, final.batch_id)).map((record) => record.index),
      [0, 1, 2, 3],
    );
    assert.deepEqual(await allProducts(fixture.svc, token), []);
  });

  void test('every item valid but none can be written (sku_conflict) → failed', async () => {
    const token = await fixture.svc.token(fixture.svc.tenant());
    const owner = product();
    await ingest(fixture.svc, token, [owner]);
    const final = await ingest(fixture.svc, token, [thief(skuOf(owner)), thief(skuOf(owner))]);
    assertRecordInvariants(final, 2);
    assertCounters(final, 'failed', [2, 2, 0, 0, 2]);
  });
});

void describe('the status record while a batch runs', () => {
  void test('every observation of a 1000-item batch satisfies the invariants, from the 202 on', async () => {
    const token = await fixture.svc.token(fixture.svc.tenant());
    // 100 invalid items (every 10th) and 10 sku conflicts (i % 100 === 5 reuses the sku of i - 1).
    const items: unknown[] = [];
    for (let i = 0; i < 1000; i++) {
      if (i % 10 === 0) items.push(withoutName());
      else if (i % 100 === 5) items.push(thief(skuOf(items[i - 1] as Record<string, unknown>)));
      else items.push(product());
    }
    const submitted = Date.now();
    const batchId = await fixture.svc.submit(token, items);
    const observations: StatusRecord[] = [];
    for (;;) {
      const record = await batchStatus(fixture.svc, token, batchId);
      observations.push(record);
      if (TERMINAL.has(record.status)) break;
      assert.ok(Date.now() - submitted < 60_000, `not terminal after 60 s: ${JSON.stringify(record)}`);
    }
    for (const record of observations) assertRecordInvariants(record, 1000);
    for (let i = 1; i < observations.length; i++) assertProgression(observations[i - 1]!, observations[i]!);

    const final = observations.at(-1)!;
    assertCounters(final, 'completed_with_errors', [1000, 900, 100, 890, 110]);
    assert.equal(final.batch_id, batchId);
    const created = Date.parse(final.created_at);
    assert.ok(created >= submitted - 2000 && created <= Date.now(), `created_at ${final.created_at}`);
    // Processing was observable: at least one record in `processing` with partial progress.
    assert.ok(
      observations.some((r) => r.status === 'processing' && r.upserted > 0 && r.upserted < 890),
      `no intermediate progress seen in ${observations.length} observations`,
    );

    // The terminal record is stable.
    await sleep(1000);
    assert.deepEqual(await batchStatus(fixture.svc, token, batchId), final);
    const errors = await fixture.svc.allErrors(token, batchId, 37);
    assert.equal(errors.length, 110);
    assert.deepEqual(
      errors.map((record) => record.index),
      items.flatMap((_, i) => (i % 10 === 0 || i % 100 === 5 ? [i] : [])),
    );
    assert.equal((await allProducts(fixture.svc, token, 500)).length, 890);
  });

  void test('tenants proceed in parallel: a small batch is not queued behind another tenant’s backlog', async () => {
    const busy = await fixture.svc.token(fixture.svc.tenant('busy'));
    const quick = await fixture.svc.token(fixture.svc.tenant('quick'));
    // Ten batches of 500 in 50-item chunks: seconds of work for the busy tenant, and ten jobs queued
    // ahead of the quick tenant's one.
    const backlog: string[] = [];
    for (let i = 0; i < 10; i++) {
      backlog.push(
        await fixture.svc.submit(
          busy,
          Array.from({ length: 500 }, () => product()),
        ),
      );
    }
    const quickFinal = await waitTerminal(fixture.svc, quick, await fixture.svc.submit(quick, [product()]));
    const busyLast = await batchStatus(fixture.svc, busy, backlog.at(-1)!);
    assertCounters(quickFinal, 'completed', [1, 1, 0, 1, 0]);
    assert.ok(
      !TERMINAL.has(busyLast.status),
      `the other tenant's backlog finished first: ${busyLast.status}`,
    );
    for (const id of backlog) {
      const final = await waitTerminal(fixture.svc, busy, id, 60_000);
      assertCounters(final, 'completed', [500, 500, 0, 500, 0]);
    }
  });
});

void describe('several worker processes on one PostgreSQL', () => {
  void test(
    'two workers never process one tenant at once: 10 batches apply in order with exact counters',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      const shared = await startSharedServices([
        { ROLE: 'api' },
        { ROLE: 'worker', WORKER_CHUNK_SIZE: '10' },
        { ROLE: 'worker', WORKER_CHUNK_SIZE: '10' },
      ]);
      try {
        const api = shared.services[0]!;
        const token = await shared.token(shared.tenant('two-workers'));
        const products = Array.from({ length: 60 }, (_, i) =>
          product({ external_id: `p-${String(i).padStart(2, '0')}` }),
        );
        const ids: string[] = [];
        for (let k = 1; k <= 10; k++) {
          const items = products.map((p) => ({
            ...p,
            name: `batch ${k}`,
            variants: [{ ...(p.variants as Array<Record<string, unknown>>)[0], price: k }],
          }));
          ids.push(await api.submit(token, items));
        }
        // Watch the tenant's batches: never two of them validating or processing at the same moment.
        const deadline = Date.now() + 90_000;
        let finals: StatusRecord[] = [];
        for (;;) {
          const res = await api.request({ method: 'GET', url: '/products/ingestions?limit=100', token });
          assert.equal(res.statusCode, 200, res.body);
          const batches = res.json<{ data: StatusRecord[] }>().data;
          const running = batches.filter((b) => b.status === 'validating' || b.status === 'processing');
          assert.ok(running.length <= 1, `two batches of one tenant running: ${JSON.stringify(running)}`);
          if (batches.length === 10 && batches.every((b) => TERMINAL.has(b.status))) {
            finals = [...batches].reverse();
            break;
          }
          assert.ok(Date.now() < deadline, 'batches not finished within 90 s');
          await sleep(20);
        }
        assert.deepEqual(
          finals.map((b) => b.batch_id),
          ids,
        );
        for (const final of finals) {
          assertCounters(final, 'completed', [60, 60, 0, 60, 0]);
        }
        for (let k = 1; k < finals.length; k++) {
          assert.ok(
            finals[k - 1]!.updated_at < finals[k]!.updated_at,
            'batches finished out of submission order',
          );
        }
        const stored = await allProducts(api, token, 500);
        assert.equal(stored.length, 60);
        for (const p of stored) {
          assert.equal(p.name, 'batch 10');
          assert.equal((p.variants as Array<Record<string, unknown>>)[0]!.price, 10);
        }
      } finally {
        await shared.stop();
      }
    },
  );
  void test(
    'a worker whose tenant lock is lost mid-batch hands the tenant back: nothing crashes, the batch ends exact',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      // What a PostgreSQL restart or a terminated backend does to a worker: the session holding its
      // tenant lock ends, and the server drops the lock. An unheard error on that connection used
      // to end the worker's process.
      const shared = await startSharedServices([
        { ROLE: 'api' },
        { ROLE: 'worker', WORKER_CHUNK_SIZE: '10' },
      ]);
      const admin = await openServerDatabase(process.env.TEST_DATABASE_URL!, { max: 1 });
      try {
        const api = shared.services[0]!;
        const tenant = shared.tenant('lock-lost');
        const token = await shared.token(tenant);
        const items = Array.from({ length: 1000 }, (_, i) => (i % 100 === 7 ? withoutName() : product()));
        const batchId = await api.submit(token, items);
        const deadline = Date.now() + 30_000;
        let holders: Array<{ pid: number }> = [];
        for (;;) {
          const status = await batchStatus(api, token, batchId);
          if (status.status === 'processing') {
            holders = await admin.query<{ pid: number }>(
              `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
                 AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
              [`${shared.schema}:tenant:${tenant}`],
            );
            if (holders.length === 1) break;
          }
          assert.ok(!TERMINAL.has(status.status), 'the batch ended before its lock could be taken away');
          assert.ok(Date.now() < deadline, 'the batch never reached processing');
          await sleep(10);
        }
        await admin.query('SELECT pg_terminate_backend($1)', [holders[0]!.pid]);
        const final = await waitTerminal(api, token, batchId);
        assertRecordInvariants(final, 1000);
        assertCounters(final, 'completed_with_errors', [1000, 990, 10, 990, 10]);
        assert.equal((await api.allErrors(token, batchId)).length, 10);
        assert.equal((await allProducts(api, token, 500)).length, 990);
      } finally {
        await admin.close();
        await shared.stop();
      }
    },
  );
});
