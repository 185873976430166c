import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { storeBatch as storeBatchIn } from '../helpers/stored-batch.ts';
import { errorShapes, product, skuOf, thief, withoutName } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertProgression,
  assertRecordInvariants,
  batchStatus,
  countersOf,
  withoutTimestamps,
  waitTerminal,
} from '../helpers/state-assertions.ts';
import type { Database } from '../../src/db/database.ts';
import { ShutdownError } from '../../src/ingestion/batch-processor.ts';
import { startBatchRun } from '../../src/ingestion/batch-progress.repository.ts';
import { abortingAfter, processorOn, bodyStored as bodyStoredIn } from '../helpers/failing-database.ts';

/**
 * CONTRACT §5 at-least-once processing, below the HTTP API: runs of the batch processor that are
 * repeated, run at once, aborted or resumed, on the real database. batch-give-up.test.ts has the
 * runs that keep failing.
 */

let svc: TestService;
before(async () => {
  // Small chunks, so a 1000-item batch passes through many observable steps.
  svc = await startTestService({ WORKER_CHUNK_SIZE: '50' });
});
after(async () => {
  await svc?.stop();
});

void describe('repeated and resumed runs of the batch processor, on the real database', () => {
  const storeBatch = (tenantId: string, items: unknown[]) => storeBatchIn(svc.service.db, tenantId, items);
  const bodyStored = (tenantId: string, batchId: string) => bodyStoredIn(svc.service.db, tenantId, batchId);

  /** Everything a client can see of a batch and its tenant's catalog. */
  async function snapshot(token: string, batchId: string) {
    return {
      status: await batchStatus(svc, token, batchId),
      errors: await svc.allErrors(token, batchId),
      products: await allProducts(svc, token),
    };
  }

  void test('processBatch run twice, one after the other, writes nothing twice', async () => {
    const tenant = svc.tenant('twice');
    const token = await svc.token(tenant);
    const owner = product();
    const items = [owner, withoutName(), product(), thief(skuOf(owner)), product(), 'a string'];
    const batchId = await storeBatch(tenant, items);
    const processor = processorOn(svc.service.db, 2);
    assert.equal(await bodyStored(tenant, batchId), true);

    const first = await processor.processBatch(tenant, batchId, new AbortController().signal);
    assert.deepEqual(first, { status: 'completed_with_errors', upserted: 3, failed: 3 });
    assert.equal(await bodyStored(tenant, batchId), false, 'the body goes with the end of its batch');
    const once = await snapshot(token, batchId);
    assertRecordInvariants(once.status, 6);
    assert.deepEqual(countersOf(once.status), {
      status: 'completed_with_errors',
      received_count: 6,
      validated_ok: 4,
      validated_failed: 2,
      upserted: 3,
      failed: 3,
    });
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
    const tenant = svc.tenant('narrowed');
    const token = await svc.token(tenant);
    const poisoned = product();
    const items = [product(), poisoned, withoutName(), product()];
    const batchId = await storeBatch(tenant, items);
    const { db, counted } = failingWritesOf(svc.service.db, skuOf(poisoned));

    const outcome = await processorOn(db, 1000).processBatch(tenant, batchId, new AbortController().signal);

    assert.deepEqual(outcome, { status: 'completed_with_errors', upserted: 2, failed: 2 });
    // Read once to validate and merge, and once more to narrow the failed write down: the run keeps
    // no items while it writes.
    assert.equal(counted.bodyReads, 2);
    const { status, errors, products } = await snapshot(token, batchId);
    assert.deepEqual(countersOf(status), {
      status: 'completed_with_errors',
      received_count: 4,
      validated_ok: 3,
      validated_failed: 1,
      upserted: 2,
      failed: 2,
    });
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
    const tenant = svc.tenant('taken-unreadable');
    const token = await svc.token(tenant);
    const owner = product();
    // Stored and run here, not submitted: a submission's job would leave the service's own worker
    // draining this tenant, and it could take up the next batch before this test's processor does.
    const ownerBatch = await storeBatch(tenant, [owner]);
    await processorOn(svc.service.db, 1000).processBatch(tenant, ownerBatch, new AbortController().signal);
    const ownerBefore = await allProducts(svc, token);
    assert.equal(ownerBefore.length, 1);
    const batchId = await storeBatch(tenant, [thief(skuOf(owner))]);
    const prepared = await processorOn(svc.service.db, 1000).prepareBatch(tenant, batchId);
    let reads = 0;
    const db: Database = {
      ...svc.service.db,
      query<R>(text: string, params?: readonly unknown[]) {
        if (text.includes('SELECT body FROM batch_payloads')) {
          reads++;
          return Promise.reject(new Error('heap out of memory'));
        }
        return svc.service.db.query<R>(text, params);
      },
    };

    // The upsert finds the sku owned by another product, so the chunk is merged again against the
    // catalog, on its items read again.
    await assert.rejects(
      processorOn(db, 1000).processBatch(tenant, batchId, new AbortController().signal, { prepared }),
      /heap out of memory/,
    );
    assert.equal(reads, 1, 'a failed read is not a failed write: no item-by-item retry reads it again');
    // Validation was recorded before the chunk; the batch waits for its next run (not terminal, so
    // its errors are read as one page).
    assert.deepEqual(countersOf(await batchStatus(svc, token, batchId)), {
      status: 'processing',
      received_count: 1,
      validated_ok: 1,
      validated_failed: 0,
      upserted: 0,
      failed: 0,
    });
    const errors = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}/errors`, token });
    assert.deepEqual(errors.json<{ data: unknown[] }>().data, []);
    // The chunk's transaction was rolled back: the thief's product was not stored, the owner is as it was.
    assert.deepEqual(await allProducts(svc, token), ownerBefore);
  });

  void test('processBatch run twice at once settles every item exactly once', async () => {
    const tenant = svc.tenant('racing');
    const token = await svc.token(tenant);
    const owner = product();
    const items = [owner, withoutName(), product(), thief(skuOf(owner)), product(), 'a string', product()];
    const batchId = await storeBatch(tenant, items);
    const outcomes = await Promise.all([
      processorOn(svc.service.db, 2).processBatch(tenant, batchId, new AbortController().signal),
      processorOn(svc.service.db, 2).processBatch(tenant, batchId, new AbortController().signal),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status).filter((status) => status !== null),
      ['completed_with_errors'],
    );
    const state = await snapshot(token, batchId);
    assert.deepEqual(countersOf(state.status), {
      status: 'completed_with_errors',
      received_count: 7,
      validated_ok: 5,
      validated_failed: 2,
      upserted: 4,
      failed: 3,
    });
    assert.deepEqual(
      state.errors.map((record) => record.index),
      [1, 3, 5],
    );
    assert.equal(state.products.length, 4);
  });

  void test('a run that died after validation and one chunk is resumed by the worker with exact counters', async () => {
    const tenant = svc.tenant('resumed');
    const token = await svc.token(tenant);
    const items = Array.from({ length: 10 }, (_, i) => (i === 4 ? withoutName() : product()));
    const batchId = await storeBatch(tenant, items);
    const controller = new AbortController();
    // Transaction 1 records the validation, transaction 2 writes items 0–2; then the "process dies".
    const dying = processorOn(abortingAfter(svc.service.db, 2, controller), 3);
    await assert.rejects(dying.processBatch(tenant, batchId, controller.signal), ShutdownError);

    const midway = await batchStatus(svc, token, batchId);
    assertRecordInvariants(midway, 10);
    assert.deepEqual(countersOf(midway), {
      status: 'processing',
      received_count: 10,
      validated_ok: 9,
      validated_failed: 1,
      upserted: 3,
      failed: 1,
    });
    assert.equal((await allProducts(svc, token)).length, 3);

    // The real worker picks the tenant up again.
    await svc.service.queue.send({ tenantId: tenant, batchId });
    const final = await waitTerminal(svc, token, batchId);
    assertRecordInvariants(final, 10);
    assertProgression(midway, final);
    assert.deepEqual(countersOf(final), {
      status: 'completed_with_errors',
      received_count: 10,
      validated_ok: 9,
      validated_failed: 1,
      upserted: 9,
      failed: 1,
    });
    assert.deepEqual(errorShapes(await svc.allErrors(token, batchId)), [
      {
        index: 4,
        external_id: (items[4] as Record<string, unknown>).external_id,
        sku: skuOf(items[4] as Record<string, unknown>),
        errors: [{ field: 'name', code: 'required' }],
      },
    ]);
    const stored = await allProducts(svc, token);
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
    const tenant = svc.tenant('early');
    const token = await svc.token(tenant);
    const afterValidation = await storeBatch(tenant, [product(), withoutName(), product()]);
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(
      processorOn(svc.service.db, 1).processBatch(tenant, afterValidation, aborted.signal),
      ShutdownError,
    );
    assert.deepEqual(countersOf(await batchStatus(svc, token, afterValidation)), {
      status: 'processing',
      received_count: 3,
      validated_ok: 2,
      validated_failed: 1,
      upserted: 0,
      failed: 1,
    });

    // What a run that died while validating leaves: the batch moved to validating, the run counted.
    const whileValidating = await storeBatch(tenant, [product(), product()]);
    assert.equal((await startBatchRun(svc.service.db, tenant, whileValidating))?.status, 'validating');
    const resumed = await processorOn(svc.service.db, 1).processBatch(
      tenant,
      afterValidation,
      new AbortController().signal,
    );
    assert.deepEqual(resumed, { status: 'completed_with_errors', upserted: 2, failed: 0 });
    await svc.service.queue.send({ tenantId: tenant, batchId: whileValidating });
    assert.deepEqual(countersOf(await waitTerminal(svc, token, whileValidating)), {
      status: 'completed',
      received_count: 2,
      validated_ok: 2,
      validated_failed: 0,
      upserted: 2,
      failed: 0,
    });
    assert.deepEqual(countersOf(await batchStatus(svc, token, afterValidation)), {
      status: 'completed_with_errors',
      received_count: 3,
      validated_ok: 2,
      validated_failed: 1,
      upserted: 2,
      failed: 1,
    });
    assert.deepEqual(
      (await svc.allErrors(token, afterValidation)).map((record) => record.index),
      [1],
    );
    assert.equal((await allProducts(svc, token)).length, 4);
  });
});
