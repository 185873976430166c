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
import { findBatch } from '../../src/ingestion/batches/batch.repository.ts';
import { countBatchAttempt } from '../../src/ingestion/batches/batch-progress.repository.ts';
import {
  abortingAfter,
  dyingOnTheBody,
  losingConnection,
  losingConnectionAfter,
} from '../helpers/failing-database.ts';

/**
 * docs/reference.md §5 at-least-once processing, below the HTTP API: a batch survives runs of the batch
 * processor that are repeated, run at once, cut short and resumed, and runs that keep failing
 * (lost connections, bodies that kill their process) until the give-up ends it with its unsettled
 * items as internal_error ("could not be processed after retries"), on the real database.
 * crash-resume.test.ts kills the service's own process; chunk-writes.test.ts has failed chunk writes.
 */

const { svc, storeBatch, bodyStored } = storedBatchService();

/** Everything a client can see of a batch and its tenant's catalog. */
async function snapshot(token: string, batchId: string) {
  return {
    status: await batchStatus(svc, token, batchId),
    errors: await svc.allErrors(token, batchId),
    products: await allProducts(svc, token),
  };
}

/** The runs counted since the batch last made progress (the worker's column, not in the status record). */
async function runsCounted(tenantId: string, batchId: string): Promise<number | undefined> {
  return (await findBatch(svc.service.db, tenantId, batchId))?.attempts;
}

void describe('repeated and resumed runs: every item settled once', () => {
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
    assertCounters(state.status, 'completed_with_errors', [7, 5, 2, 4, 3]);
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
    assertCounters(midway, 'processing', [10, 9, 1, 3, 1]);
    assert.equal((await allProducts(svc, token)).length, 3);

    // The real worker picks the tenant up again.
    await svc.service.queue.send({ tenantId: tenant, batchId });
    const final = await waitTerminal(svc, token, batchId);
    assertRecordInvariants(final, 10);
    assertProgression(midway, final);
    assertCounters(final, 'completed_with_errors', [10, 9, 1, 9, 1]);
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
    assert.equal(
      (await countBatchAttempt(svc.service.db, { tenantId: tenant, batchId: whileValidating }))?.status,
      'validating',
    );
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

void describe('runs that keep failing, and the give-up', () => {
  /** Whether the batch has its end recorded, which BATCH_RETENTION_DAYS counts from. */
  async function endRecorded(tenantId: string, batchId: string): Promise<boolean> {
    const rows = await svc.service.db.query<{ ended: boolean }>(
      'SELECT ended_at IS NOT NULL AS ended FROM batches WHERE tenant_id = $1 AND id = $2',
      [tenantId, batchId],
    );
    return rows[0]!.ended;
  }

  /**
   * A batch never validated, after two runs that got nowhere: still `validating` with no counts,
   * and the next run of a processor with maxAttempts 2 gives up on it: each item fails as internal_error with its `keys`
   * (what the stored body names), and nothing is written.
   */
  async function assertGivenUpOnAll(
    tenant: string,
    token: string,
    batchId: string,
    keys: Array<{ external_id: unknown; sku: string | null }>,
  ) {
    const n = keys.length;
    assert.deepEqual(countersOf(await batchStatus(svc, token, batchId)), {
      status: 'validating',
      received_count: n,
      validated_ok: 0,
      validated_failed: 0,
      upserted: 0,
      failed: 0,
    });
    const processor = processorOn(svc.service.db, 2, 2);
    assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
      status: 'failed',
      upserted: 0,
      failed: n,
    });
    const final = await batchStatus(svc, token, batchId);
    assertRecordInvariants(final, n);
    assertCounters(final, 'failed', [n, 0, n, 0, n]);
    assert.deepEqual(
      errorShapes(await svc.allErrors(token, batchId)),
      keys.map((key, index) => ({ index, ...key, errors: [{ field: '', code: 'internal_error' }] })),
    );
    assert.deepEqual(await allProducts(svc, token), []);
  }

  /** The keys of an item failed without its body. */
  const noKeys = { external_id: null, sku: null };

  void test('after maxAttempts runs that fail, the unsettled items fail as internal_error and the batch ends', async () => {
    const tenant = svc.tenant('give-up');
    const token = await svc.token(tenant);
    const items = [product(), product(), product(), withoutName(), product()];
    const batchId = await storeBatch(tenant, items);
    const controller = new AbortController();
    const dying = processorOn(abortingAfter(svc.service.db, 2, controller), 2, 3);
    await assert.rejects(dying.processBatch(tenant, batchId, controller.signal), ShutdownError);
    const midway = await batchStatus(svc, token, batchId);
    assertCounters(midway, 'processing', [5, 4, 1, 2, 1]);

    assert.equal(await runsCounted(tenant, batchId), 0, 'a run cut short by a shutdown gives its count back');
    assert.equal(await bodyStored(tenant, batchId), true);
    assert.equal(await endRecorded(tenant, batchId), false);

    const processor = processorOn(svc.service.db, 2, 3);
    const failing = processorOn(losingConnection(svc.service.db), 2, 3);
    const failedRun = async () => {
      await assert.rejects(failing.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
      await processor.settleFailedRun(tenant, batchId);
    };
    await failedRun();
    await failedRun();
    assert.equal(await runsCounted(tenant, batchId), 2);
    assert.deepEqual(
      await batchStatus(svc, token, batchId),
      midway,
      'below maxAttempts nothing visible changes',
    );
    await failedRun();

    const final = await batchStatus(svc, token, batchId);
    assertRecordInvariants(final, 5);
    assertProgression(midway, final);
    // docs/reference.md §5: `failed` — "every item failed, or the batch could not be processed after retries".
    assertCounters(final, 'failed', [5, 4, 1, 2, 3]);
    const internal = (i: number) => ({
      index: i,
      external_id: (items[i] as Record<string, unknown>).external_id,
      sku: skuOf(items[i] as Record<string, unknown>),
      errors: [{ field: '', code: 'internal_error' }],
    });
    assert.deepEqual(errorShapes(await svc.allErrors(token, batchId)), [
      internal(2),
      {
        index: 3,
        external_id: (items[3] as Record<string, unknown>).external_id,
        sku: skuOf(items[3] as Record<string, unknown>),
        errors: [{ field: 'name', code: 'required' }],
      },
      internal(4),
    ]);
    assert.equal((await allProducts(svc, token)).length, 2);
    assert.equal(await bodyStored(tenant, batchId), false, 'a batch given up on drops its body too');
    assert.equal(await endRecorded(tenant, batchId), true, 'and records its end, for its retention');

    // A terminal batch stays as it is: more failed runs or another run change nothing.
    await processor.settleFailedRun(tenant, batchId);
    assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
      status: null,
      upserted: 0,
      failed: 0,
    });
    assert.deepEqual(await batchStatus(svc, token, batchId), final);
  });

  void test('a batch whose body is gone is not finished on what is left: its runs end it as failed', async () => {
    const tenant = svc.tenant('no-body');
    const token = await svc.token(tenant);
    const batchId = await storeBatch(tenant, [product(), product(), product()]);
    await svc.service.db.query('DELETE FROM batch_payloads WHERE tenant_id = $1 AND batch_id = $2', [
      tenant,
      batchId,
    ]);
    const processor = processorOn(svc.service.db, 2, 2);
    for (let run = 1; run <= 2; run++) {
      assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
        status: null,
        upserted: 0,
        failed: 0,
      });
      assert.equal(await runsCounted(tenant, batchId), run);
    }
    // Without the body, the items fail without the keys it would have named.
    await assertGivenUpOnAll(tenant, token, batchId, [noKeys, noKeys, noKeys]);
  });

  void test('runs that die with their process count: the run after maxAttempts of them fails every item', async () => {
    const tenant = svc.tenant('give-up-early');
    const token = await svc.token(tenant);
    const items = [product(), 'a string', product()];
    const batchId = await storeBatch(tenant, items);
    // A run that kills its process never gets to settle its failure: nothing but its start is recorded.
    const dying = processorOn(losingConnection(svc.service.db), 2, 2);
    for (let run = 1; run <= 2; run++) {
      await assert.rejects(dying.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
      assert.equal(await runsCounted(tenant, batchId), run);
    }
    const keysOf = (item: unknown) => ({
      external_id: (item as Record<string, unknown>).external_id,
      sku: skuOf(item as Record<string, unknown>),
    });
    await assertGivenUpOnAll(tenant, token, batchId, [
      keysOf(items[0]),
      { external_id: null, sku: null },
      keysOf(items[2]),
    ]);
  });

  /**
   * A batch of two products whose first two runs died (maxAttempts 2) and whose third, giving up,
   * died reading the body for the items' keys. Returns the batch and that third run's processor,
   * whose every read of a body still fails.
   */
  async function afterAGiveUpThatDied(tenant: string) {
    const batchId = await storeBatch(tenant, [product(), product()]);
    const dying = processorOn(losingConnection(svc.service.db), 2, 2);
    for (let run = 1; run <= 2; run++) {
      await assert.rejects(dying.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
    }
    const parsing = processorOn(dyingOnTheBody(svc.service.db), 2, 2);
    await assert.rejects(
      parsing.processBatch(tenant, batchId, new AbortController().signal),
      /out of memory/,
    );
    assert.equal(await runsCounted(tenant, batchId), 3);
    assert.equal(await bodyStored(tenant, batchId), true);
    return { batchId, parsing };
  }

  void test('a give-up that dies reading the body is followed by one that fails the items without reading it', async () => {
    const tenant = svc.tenant('give-up-dies');
    const { batchId } = await afterAGiveUpThatDied(tenant);
    // The fourth run does not read it: the items fail without the keys the body would have named.
    await assertGivenUpOnAll(tenant, await svc.token(tenant), batchId, [noKeys, noKeys]);
    assert.equal(await bodyStored(tenant, batchId), false);
  });

  void test('a give-up that failed is settled without reading the body again', async () => {
    const tenant = svc.tenant('settle-give-up');
    const token = await svc.token(tenant);
    const { batchId, parsing } = await afterAGiveUpThatDied(tenant);
    // As the worker settles a run that failed: a read of the body here would fail again.
    await parsing.settleFailedRun(tenant, batchId);
    const final = await batchStatus(svc, token, batchId);
    assertRecordInvariants(final, 2);
    assertCounters(final, 'failed', [2, 0, 2, 0, 2]);
    assert.deepEqual(errorShapes(await svc.allErrors(token, batchId)), [
      { index: 0, ...noKeys, errors: [{ field: '', code: 'internal_error' }] },
      { index: 1, ...noKeys, errors: [{ field: '', code: 'internal_error' }] },
    ]);
    assert.equal(await bodyStored(tenant, batchId), false);
  });

  void test('runs that each make progress before they die never add up: the batch finishes', async () => {
    const tenant = svc.tenant('progress');
    const token = await svc.token(tenant);
    const batchId = await storeBatch(tenant, [product(), product(), product(), product()]);
    // Run 1 commits its validation and a chunk, runs 2 and 3 a chunk each; each then dies.
    for (const commits of [2, 1, 1]) {
      const dying = processorOn(losingConnectionAfter(svc.service.db, commits), 1, 2);
      await assert.rejects(dying.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
      assert.equal(await runsCounted(tenant, batchId), 0, 'a chunk written starts the count again');
    }
    const processor = processorOn(svc.service.db, 1, 2);
    assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
      status: 'completed',
      upserted: 1,
      failed: 0,
    });
    const final = await batchStatus(svc, token, batchId);
    assertRecordInvariants(final, 4);
    assert.equal(final.upserted, 4);
    assert.equal((await allProducts(svc, token)).length, 4);
  });

  void test('a run stopped by a shutdown gives its count back, also when the database fails under it', async () => {
    const tenant = svc.tenant('closing');
    const token = await svc.token(tenant);
    const batchId = await storeBatch(tenant, [product()]);
    const controller = new AbortController();
    const closing: Database = {
      ...svc.service.db,
      transaction() {
        controller.abort();
        return Promise.reject(new Error('Connection terminated unexpectedly'));
      },
    };
    await assert.rejects(
      processorOn(closing, 1, 2).processBatch(tenant, batchId, controller.signal),
      ShutdownError,
    );
    assert.equal(await runsCounted(tenant, batchId), 0);
    assert.equal((await batchStatus(svc, token, batchId)).status, 'validating');
  });

  void test('a run after one that got nowhere reads nothing ahead; a preparation counts nothing', async () => {
    const tenant = svc.tenant('prepared');
    const processor = processorOn(svc.service.db, 2, 3);
    const failing = processorOn(losingConnection(svc.service.db), 2, 3);
    const signal = new AbortController().signal;
    const readsAhead = async (batchId: string) => {
      let called = false;
      await processor.processBatch(tenant, batchId, signal, { onWriting: () => (called = true) });
      return called;
    };

    const first = await storeBatch(tenant, [product(), product()]);
    const prepared = await processor.prepareBatch(tenant, first);
    assert.equal(prepared?.batchId, first);
    assert.equal(await runsCounted(tenant, first), 0);
    assert.deepEqual(await processor.processBatch(tenant, first, signal, { prepared }), {
      status: 'completed',
      upserted: 2,
      failed: 0,
    });
    assert.equal(await runsCounted(tenant, first), 0, 'counted at its start, and progress started it again');

    // A first run reads ahead while its rows are written.
    assert.equal(await readsAhead(await storeBatch(tenant, [product()])), true);
    // The run after one that got nowhere (here it failed; it may have died preparing the next
    // batch) writes without reading ahead.
    const second = await storeBatch(tenant, [product()]);
    await assert.rejects(failing.processBatch(tenant, second, signal), /Connection/);
    assert.equal(await runsCounted(tenant, second), 1);
    assert.equal(await readsAhead(second), false);
    assert.equal(await runsCounted(tenant, second), 0);
  });
});
