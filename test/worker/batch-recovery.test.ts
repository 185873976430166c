import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { processorOn, storedBatchService } from '../helpers/stored-batch.ts';
import { errorShapes, product, skuOf, thief, withoutName } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertProgression,
  assertRecordInvariants,
  batchStatus,
  assertCounters,
  countersOf,
  withoutTimestamps,
  waitTerminal,
} from '../helpers/assertions.ts';
import type { Database } from '../../src/db/database.ts';
import { ShutdownError } from '../../src/worker/batch-processor.ts';
import { countBatchAttempt } from '../../src/worker/batch-progress.repository.ts';
import { abortingAfter } from '../helpers/failing-database.ts';

/**
 * CONTRACT §5 at-least-once processing, below the HTTP API: runs of the batch processor that are
 * repeated, run at once, aborted or resumed, on the real database. batch-give-up.test.ts has the
 * runs that keep failing.
 */

const fixture = storedBatchService();

void describe('repeated and resumed runs of the batch processor, on the real database', () => {
  const { storeBatch, bodyStored } = fixture;

  /** Everything a client can see of a batch and its tenant's catalog. */
  async function snapshot(token: string, batchId: string) {
    return {
      status: await batchStatus(fixture.svc, token, batchId),
      errors: await fixture.svc.allErrors(token, batchId),
      products: await allProducts(fixture.svc, token),
    };
  }

  void test('processBatch run twice, one after the other, writes nothing twice', async () => {
    const tenant = fixture.svc.tenant('twice');
    const token = await fixture.svc.token(tenant);
    const owner = product();
    const items = [owner, withoutName(), product(), thief(skuOf(owner)), product(), 'a string'];
    const batchId = await storeBatch(tenant, items);
    const processor = processorOn(fixture.svc.service.db, 2);
    assert.equal(await bodyStored(tenant, batchId), true);

    const first = await processor.processBatch(tenant, batchId, new AbortController().signal);
    assert.deepEqual(first, { status: 'completed_with_errors', upserted: 3, failed: 3 });
    assert.equal(await bodyStored(tenant, batchId), false, 'the body goes with the end of its batch');
    const once = await snapshot(token, batchId);
    assertRecordInvariants(once.status, 6);
    assertCounters(once.status, 'completed_with_errors', [6, 4, 2, 3, 3]);
    assert.deepEqual(
      once.errors.map((record) => record.index),
      [1, 3, 5],
    );
    assert.deepEqual(once.products.map((p) => p.external_id).sort(), [
      ...[items[0], items[2], items[4]].map((item) => (item as Record<string, unknown>).external_id).sort(),
    ]);

    const second = await processor.processBatch(tenant, batchId, new AbortController().signal);
    assert.deepEqual(second, { status: null, upserted: 0, failed: 0 });
    assert.deepEqual(await snapshot(token, batchId), once);
  });

  /**
   * The database, but a transaction's variants upsert fails as PostgreSQL fails a value it cannot
   * take (SQLSTATE 22P02) whenever its rows hold `sku`; counts the reads of batch bodies.
   */
  function failingWritesOf(db: Database, sku: string) {
    const counted = { bodyReads: 0 };
    const wrapped: Database = {
      ...db,
      query<R>(text: string, params?: readonly unknown[]) {
        if (text.includes('SELECT body FROM batch_payloads')) counted.bodyReads++;
        return db.query<R>(text, params);
      },
      transaction: (fn) =>
        db.transaction((tx) =>
          fn({
            ...tx,
            query<R>(text: string, params?: readonly unknown[]) {
              if (/INSERT INTO variants/.test(text) && String(params?.[1]).includes(`"${sku}"`)) {
                return Promise.reject(Object.assign(new Error('invalid input syntax'), { code: '22P02' }));
              }
              return tx.query<R>(text, params);
            },
          }),
        ),
    };
    return { db: wrapped, counted };
  }

  void test('a chunk whose write fails on its data is written item by item, the item that still fails as internal_error', async () => {
    const tenant = fixture.svc.tenant('narrowed');
    const token = await fixture.svc.token(tenant);
    const poisoned = product();
    const items = [product(), poisoned, withoutName(), product()];
    const batchId = await storeBatch(tenant, items);
    const { db, counted } = failingWritesOf(fixture.svc.service.db, skuOf(poisoned));

    const outcome = await processorOn(db, 1000).processBatch(tenant, batchId, new AbortController().signal);

    assert.deepEqual(outcome, { status: 'completed_with_errors', upserted: 2, failed: 2 });
    // Read once to validate and merge, and once more to narrow the failed write down: the run keeps
    // no items while it writes.
    assert.equal(counted.bodyReads, 2);
    const { status, errors, products } = await snapshot(token, batchId);
    assertCounters(status, 'completed_with_errors', [4, 3, 1, 2, 2]);
    assert.deepEqual(errorShapes(errors), [
      {
        index: 1,
        external_id: poisoned.external_id,
        sku: skuOf(poisoned),
        errors: [{ field: '', code: 'internal_error' }],
      },
      {
        index: 2,
        external_id: items[2]!.external_id,
        sku: skuOf(items[2]!),
        errors: [{ field: 'name', code: 'required' }],
      },
    ]);
    assert.deepEqual(
      products.map((p) => p.external_id).sort(),
      [items[0]!.external_id, items[3]!.external_id].sort(),
    );
  });

  void test('a prepared chunk with a sku of another product, whose items cannot be read again, fails the run, and nothing is narrowed down', async () => {
    const tenant = fixture.svc.tenant('taken-unreadable');
    const token = await fixture.svc.token(tenant);
    const owner = product();
    // Stored and run here, not submitted: a submission's job would leave the service's own worker
    // draining this tenant, and it could take up the next batch before this test's processor does.
    const ownerBatch = await storeBatch(tenant, [owner]);
    await processorOn(fixture.svc.service.db, 1000).processBatch(
      tenant,
      ownerBatch,
      new AbortController().signal,
    );
    const ownerBefore = await allProducts(fixture.svc, token);
    assert.equal(ownerBefore.length, 1);
    const batchId = await storeBatch(tenant, [thief(skuOf(owner))]);
    // Reading the body fails once the batch is prepared (the prepared items read through this database).
    let reads = 0;
    let readable = true;
    const db: Database = {
      ...fixture.svc.service.db,
      query<R>(text: string, params?: readonly unknown[]) {
        if (!readable && text.includes('SELECT body FROM batch_payloads')) {
          reads++;
          return Promise.reject(new Error('heap out of memory'));
        }
        return fixture.svc.service.db.query<R>(text, params);
      },
    };

    const processor = processorOn(db, 1000);
    const prepared = await processor.prepareBatch(tenant, batchId);
    readable = false;

    // The upsert finds the sku owned by another product, so the chunk is merged again against the
    // catalog, on its items read again.
    await assert.rejects(
      processor.processBatch(tenant, batchId, new AbortController().signal, { prepared }),
      /heap out of memory/,
    );
    assert.equal(reads, 1, 'a failed read is not a failed write: no item-by-item retry reads it again');
    // Validation was recorded before the chunk; the batch waits for its next run (not terminal, so
    // its errors are read as one page).
    assert.deepEqual(countersOf(await batchStatus(fixture.svc, token, batchId)), {
      status: 'processing',
      received_count: 1,
      validated_ok: 1,
      validated_failed: 0,
      upserted: 0,
      failed: 0,
    });
    const errors = await fixture.svc.request({
      method: 'GET',
      url: `/products/ingestions/${batchId}/errors`,
      token,
    });
    assert.deepEqual(errors.json<{ data: unknown[] }>().data, []);
    // The chunk's transaction was rolled back: the thief's product was not stored, the owner is as it was.
    assert.deepEqual(await allProducts(fixture.svc, token), ownerBefore);
  });

  void test('processBatch run twice at once settles every item exactly once', async () => {
    const tenant = fixture.svc.tenant('racing');
    const token = await fixture.svc.token(tenant);
    const owner = product();
    const items = [owner, withoutName(), product(), thief(skuOf(owner)), product(), 'a string', product()];
    const batchId = await storeBatch(tenant, items);
    const outcomes = await Promise.all([
      processorOn(fixture.svc.service.db, 2).processBatch(tenant, batchId, new AbortController().signal),
      processorOn(fixture.svc.service.db, 2).processBatch(tenant, batchId, new AbortController().signal),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status).filter((status) => status !== null),
      ['completed_with_errors'],
    );
    const state = await snapshot(token, batchId);
    assertCounters(state.status, 'completed_with_errors', [7, 5, 2, 4, 3]);
    assert.deepEqual(
      state.errors.map((record) => record.index),
      [1, 3, 5],
    );
    assert.equal(state.products.length, 4);
  });

  void test('a run that died after validation and one chunk is resumed by the worker with exact counters', async () => {
    const tenant = fixture.svc.tenant('resumed');
    const token = await fixture.svc.token(tenant);
    const items = Array.from({ length: 10 }, (_, i) => (i === 4 ? withoutName() : product()));
    const batchId = await storeBatch(tenant, items);
    const controller = new AbortController();
    // Transaction 1 records the validation, transaction 2 writes items 0–2; then the "process dies".
    const dying = processorOn(abortingAfter(fixture.svc.service.db, 2, controller), 3);
    await assert.rejects(dying.processBatch(tenant, batchId, controller.signal), ShutdownError);

    const midway = await batchStatus(fixture.svc, token, batchId);
    assertRecordInvariants(midway, 10);
    assertCounters(midway, 'processing', [10, 9, 1, 3, 1]);
    assert.equal((await allProducts(fixture.svc, token)).length, 3);

    // The real worker picks the tenant up again.
    await fixture.svc.service.queue.send({ tenantId: tenant, batchId });
    const final = await waitTerminal(fixture.svc, token, batchId);
    assertRecordInvariants(final, 10);
    assertProgression(midway, final);
    assertCounters(final, 'completed_with_errors', [10, 9, 1, 9, 1]);
    assert.deepEqual(errorShapes(await fixture.svc.allErrors(token, batchId)), [
      {
        index: 4,
        external_id: (items[4] as Record<string, unknown>).external_id,
        sku: skuOf(items[4] as Record<string, unknown>),
        errors: [{ field: 'name', code: 'required' }],
      },
    ]);
    const stored = await allProducts(fixture.svc, token);
    assert.deepEqual(
      stored.map((p) => p.external_id).sort(),
      items
        .filter((_, i) => i !== 4)
        .map((item) => item.external_id as string)
        .sort(),
    );
    for (const p of stored) {
      const sent = items.find((item) => item.external_id === p.external_id)!;
      assert.equal((withoutTimestamps(p).variants as unknown[]).length, (sent.variants as unknown[]).length);
    }
  });

  void test('a run that died right after validation, or while validating, is resumed exactly', async () => {
    const tenant = fixture.svc.tenant('early');
    const token = await fixture.svc.token(tenant);
    const afterValidation = await storeBatch(tenant, [product(), withoutName(), product()]);
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(
      processorOn(fixture.svc.service.db, 1).processBatch(tenant, afterValidation, aborted.signal),
      ShutdownError,
    );
    assert.deepEqual(countersOf(await batchStatus(fixture.svc, token, afterValidation)), {
      status: 'processing',
      received_count: 3,
      validated_ok: 2,
      validated_failed: 1,
      upserted: 0,
      failed: 1,
    });

    // What a run that died while validating leaves: the batch moved to validating, the run counted.
    const whileValidating = await storeBatch(tenant, [product(), product()]);
    assert.equal(
      (await countBatchAttempt(fixture.svc.service.db, tenant, whileValidating))?.status,
      'validating',
    );
    const resumed = await processorOn(fixture.svc.service.db, 1).processBatch(
      tenant,
      afterValidation,
      new AbortController().signal,
    );
    assert.deepEqual(resumed, { status: 'completed_with_errors', upserted: 2, failed: 0 });
    await fixture.svc.service.queue.send({ tenantId: tenant, batchId: whileValidating });
    assert.deepEqual(countersOf(await waitTerminal(fixture.svc, token, whileValidating)), {
      status: 'completed',
      received_count: 2,
      validated_ok: 2,
      validated_failed: 0,
      upserted: 2,
      failed: 0,
    });
    assert.deepEqual(countersOf(await batchStatus(fixture.svc, token, afterValidation)), {
      status: 'completed_with_errors',
      received_count: 3,
      validated_ok: 2,
      validated_failed: 1,
      upserted: 2,
      failed: 1,
    });
    assert.deepEqual(
      (await fixture.svc.allErrors(token, afterValidation)).map((record) => record.index),
      [1],
    );
    assert.equal((await allProducts(fixture.svc, token)).length, 4);
  });
});
