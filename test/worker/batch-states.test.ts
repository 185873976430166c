import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { errorShapes, product, skuOf, thief, withoutName } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertProgression,
  assertRecordInvariants,
  batchStatus,
  assertCounters,
  ingest,
  TERMINAL,
  type StatusRecord,
} from '../helpers/assertions.ts';

/**
 * docs/reference.md §5 states and exact counters, §6 the status record, as the worker leaves them for each
 * kind of batch and as a client sees them while a batch runs.
 */

// Small chunks, so that a batch passes through many observable steps.
const svc = testServiceForFile({ WORKER_CHUNK_SIZE: '50' });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

void describe('terminal states and exact counters', () => {
  void test('all items valid → completed', async () => {
    const token = await svc.token(svc.tenant());
    const final = await ingest(svc, token, [product(), product(), product()]);
    assertRecordInvariants(final, 3);
    assertCounters(final, 'completed', [3, 3, 0, 3, 0]);
    const errors = await svc.request({
      method: 'GET',
      url: `/products/ingestions/${final.batch_id}/errors`,
      token,
    });
    assert.deepEqual(errors.json(), { data: [], next_cursor: null });
  });

  void test('some items fail (validation and sku_conflict) → completed_with_errors', async () => {
    const token = await svc.token(svc.tenant());
    const owner = product();
    const items = [owner, withoutName(), product(), thief(skuOf(owner)), 'not an object'];
    const final = await ingest(svc, token, items);
    assertRecordInvariants(final, 5);
    assertCounters(final, 'completed_with_errors', [5, 3, 2, 2, 3]);
    assert.deepEqual(errorShapes(await svc.allErrors(token, final.batch_id)), [
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
    const token = await svc.token(svc.tenant());
    const final = await ingest(svc, token, [withoutName(), 42, null, withoutName()]);
    assertRecordInvariants(final, 4);
    assertCounters(final, 'failed', [4, 0, 4, 0, 4]);
    assert.deepEqual(
      (await svc.allErrors(token, final.batch_id)).map((record) => record.index),
      [0, 1, 2, 3],
    );
    assert.deepEqual(await allProducts(svc, token), []);
  });

  void test('every item valid but none can be written (sku_conflict) → failed', async () => {
    const token = await svc.token(svc.tenant());
    const owner = product();
    await ingest(svc, token, [owner]);
    const final = await ingest(svc, token, [thief(skuOf(owner)), thief(skuOf(owner))]);
    assertRecordInvariants(final, 2);
    assertCounters(final, 'failed', [2, 2, 0, 0, 2]);
  });
});

void describe('the status record while a batch runs', () => {
  void test('every observation of a 1000-item batch satisfies the invariants, from the 202 on', async () => {
    const token = await svc.token(svc.tenant());
    // 100 invalid items (every 10th) and 10 sku conflicts (i % 100 === 5 reuses the sku of i - 1).
    const items: unknown[] = [];
    for (let i = 0; i < 1000; i++) {
      if (i % 10 === 0) items.push(withoutName());
      else if (i % 100 === 5) items.push(thief(skuOf(items[i - 1] as Record<string, unknown>)));
      else items.push(product());
    }
    const submitted = Date.now();
    const batchId = await svc.submit(token, items);
    const observations: StatusRecord[] = [];
    for (;;) {
      const record = await batchStatus(svc, token, batchId);
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
    assert.deepEqual(await batchStatus(svc, token, batchId), final);
    const errors = await svc.allErrors(token, batchId, 37);
    assert.equal(errors.length, 110);
    assert.deepEqual(
      errors.map((record) => record.index),
      items.flatMap((_, i) => (i % 10 === 0 || i % 100 === 5 ? [i] : [])),
    );
    assert.equal((await allProducts(svc, token, 500)).length, 890);
  });
});
