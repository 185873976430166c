import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { processorOn, storedBatchService } from '../helpers/stored-batch.ts';
import { errorShapes, product, skuOf, withoutName } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertProgression,
  assertRecordInvariants,
  batchStatus,
  assertCounters,
  countersOf,
} from '../helpers/assertions.ts';
import type { Database } from '../../src/db/database.ts';
import { ShutdownError } from '../../src/worker/batch-processor.ts';
import { findBatch } from '../../src/ingestion/batch.repository.ts';
import {
  abortingAfter,
  dyingOnTheBody,
  losingConnection,
  losingConnectionAfter,
} from '../helpers/failing-database.ts';

/**
 * CONTRACT §5 "could not be processed after retries": runs of the batch processor that keep failing
 * (lost connections, bodies that kill their process, shutdowns) and the give-up that ends the
 * batch with its unsettled items as internal_error, on the real database.
 */

const fixture = storedBatchService();

void describe('runs that keep failing, and the give-up, on the real database', () => {
  const { storeBatch, bodyStored } = fixture;

  /** Whether the batch has its end recorded, which BATCH_RETENTION_DAYS counts from. */
  async function endRecorded(tenantId: string, batchId: string): Promise<boolean> {
    const rows = await fixture.svc.service.db.query<{ ended: boolean }>(
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
    assert.deepEqual(countersOf(await batchStatus(fixture.svc, token, batchId)), {
      status: 'validating',
      received_count: n,
      validated_ok: 0,
      validated_failed: 0,
      upserted: 0,
      failed: 0,
    });
    const processor = processorOn(fixture.svc.service.db, 2, 2);
    assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
      status: 'failed',
      upserted: 0,
      failed: n,
    });
    const final = await batchStatus(fixture.svc, token, batchId);
    assertRecordInvariants(final, n);
    assertCounters(final, 'failed', [n, 0, n, 0, n]);
    assert.deepEqual(
      errorShapes(await fixture.svc.allErrors(token, batchId)),
      keys.map((key, index) => ({ index, ...key, errors: [{ field: '', code: 'internal_error' }] })),
    );
    assert.deepEqual(await allProducts(fixture.svc, token), []);
  }

  /** The keys of an item failed without its body. */
  const noKeys = { external_id: null, sku: null };

  /** The runs counted since the batch last made progress (the worker's column, not in the status record). */
  async function runsCounted(tenantId: string, batchId: string): Promise<number | undefined> {
    return (await findBatch(fixture.svc.service.db, tenantId, batchId))?.attempts;
  }

  void test('after maxAttempts runs that fail, the unsettled items fail as internal_error and the batch ends', async () => {
    const tenant = fixture.svc.tenant('give-up');
    const token = await fixture.svc.token(tenant);
    const items = [product(), product(), product(), withoutName(), product()];
    const batchId = await storeBatch(tenant, items);
    const controller = new AbortController();
    const dying = processorOn(abortingAfter(fixture.svc.service.db, 2, controller), 2, 3);
    await assert.rejects(dying.processBatch(tenant, batchId, controller.signal), ShutdownError);
    const midway = await batchStatus(fixture.svc, token, batchId);
    assertCounters(midway, 'processing', [5, 4, 1, 2, 1]);

    assert.equal(await runsCounted(tenant, batchId), 0, 'a run cut short by a shutdown gives its count back');
    assert.equal(await bodyStored(tenant, batchId), true);
    assert.equal(await endRecorded(tenant, batchId), false);

    const processor = processorOn(fixture.svc.service.db, 2, 3);
    const failing = processorOn(losingConnection(fixture.svc.service.db), 2, 3);
    const failedRun = async () => {
      await assert.rejects(failing.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
      await processor.settleFailedRun(tenant, batchId);
    };
    await failedRun();
    await failedRun();
    assert.equal(await runsCounted(tenant, batchId), 2);
    assert.deepEqual(
      await batchStatus(fixture.svc, token, batchId),
      midway,
      'below maxAttempts nothing visible changes',
    );
    await failedRun();

    const final = await batchStatus(fixture.svc, token, batchId);
    assertRecordInvariants(final, 5);
    assertProgression(midway, final);
    // CONTRACT §5: `failed` — "every item failed, or the batch could not be processed after retries".
    assertCounters(final, 'failed', [5, 4, 1, 2, 3]);
    const internal = (i: number) => ({
      index: i,
      external_id: (items[i] as Record<string, unknown>).external_id,
      sku: skuOf(items[i] as Record<string, unknown>),
      errors: [{ field: '', code: 'internal_error' }],
    });
    assert.deepEqual(errorShapes(await fixture.svc.allErrors(token, batchId)), [
      internal(2),
      {
        index: 3,
        external_id: (items[3] as Record<string, unknown>).external_id,
        sku: skuOf(items[3] as Record<string, unknown>),
        errors: [{ field: 'name', code: 'required' }],
      },
      internal(4),
    ]);
    assert.equal((await allProducts(fixture.svc, token)).length, 2);
    assert.equal(await bodyStored(tenant, batchId), false, 'a batch given up on drops its body too');
    assert.equal(await endRecorded(tenant, batchId), true, 'and records its end, for its retention');

    // A terminal batch stays as it is: more failed runs or another run change nothing.
    await processor.settleFailedRun(tenant, batchId);
    assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
      status: null,
      upserted: 0,
      failed: 0,
    });
    assert.deepEqual(await batchStatus(fixture.svc, token, batchId), final);
  });

  void test('a batch whose body is gone is not finished on what is left: its runs end it as failed', async () => {
    const tenant = fixture.svc.tenant('no-body');
    const token = await fixture.svc.token(tenant);
    const batchId = await storeBatch(tenant, [product(), product(), product()]);
    await fixture.svc.service.db.query('DELETE FROM batch_payloads WHERE tenant_id = $1 AND batch_id = $2', [
      tenant,
      batchId,
    ]);
    const processor = processorOn(fixture.svc.service.db, 2, 2);
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
    const tenant = fixture.svc.tenant('give-up-early');
    const token = await fixture.svc.token(tenant);
    const items = [product(), 'a string', product()];
    const batchId = await storeBatch(tenant, items);
    // A run that kills its process never gets to settle its failure: nothing but its start is recorded.
    const dying = processorOn(losingConnection(fixture.svc.service.db), 2, 2);
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
    const dying = processorOn(losingConnection(fixture.svc.service.db), 2, 2);
    for (let run = 1; run <= 2; run++) {
      await assert.rejects(dying.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
    }
    const parsing = processorOn(dyingOnTheBody(fixture.svc.service.db), 2, 2);
    await assert.rejects(
      parsing.processBatch(tenant, batchId, new AbortController().signal),
      /out of memory/,
    );
    assert.equal(await runsCounted(tenant, batchId), 3);
    assert.equal(await bodyStored(tenant, batchId), true);
    return { batchId, parsing };
  }

  void test('a give-up that dies reading the body is followed by one that fails the items without reading it', async () => {
    const tenant = fixture.svc.tenant('give-up-dies');
    const { batchId } = await afterAGiveUpThatDied(tenant);
    // The fourth run does not read it: the items fail without the keys the body would have named.
    await assertGivenUpOnAll(tenant, await fixture.svc.token(tenant), batchId, [noKeys, noKeys]);
    assert.equal(await bodyStored(tenant, batchId), false);
  });

  void test('a give-up that failed is settled without reading the body again', async () => {
    const tenant = fixture.svc.tenant('settle-give-up');
    const token = await fixture.svc.token(tenant);
    const { batchId, parsing } = await afterAGiveUpThatDied(tenant);
    // As the worker settles a run that failed: a read of the body here would fail again.
    await parsing.settleFailedRun(tenant, batchId);
    const final = await batchStatus(fixture.svc, token, batchId);
    assertRecordInvariants(final, 2);
    assertCounters(final, 'failed', [2, 0, 2, 0, 2]);
    assert.deepEqual(errorShapes(await fixture.svc.allErrors(token, batchId)), [
      { index: 0, ...noKeys, errors: [{ field: '', code: 'internal_error' }] },
      { index: 1, ...noKeys, errors: [{ field: '', code: 'internal_error' }] },
    ]);
    assert.equal(await bodyStored(tenant, batchId), false);
  });

  void test('runs that each make progress before they die never add up: the batch finishes', async () => {
    const tenant = fixture.svc.tenant('progress');
    const token = await fixture.svc.token(tenant);
    const batchId = await storeBatch(tenant, [product(), product(), product(), product()]);
    // Run 1 commits its validation and a chunk, runs 2 and 3 a chunk each; each then dies.
    for (const commits of [2, 1, 1]) {
      const dying = processorOn(losingConnectionAfter(fixture.svc.service.db, commits), 1, 2);
      await assert.rejects(dying.processBatch(tenant, batchId, new AbortController().signal), /Connection/);
      assert.equal(await runsCounted(tenant, batchId), 0, 'a chunk written starts the count again');
    }
    const processor = processorOn(fixture.svc.service.db, 1, 2);
    assert.deepEqual(await processor.processBatch(tenant, batchId, new AbortController().signal), {
      status: 'completed',
      upserted: 1,
      failed: 0,
    });
    const final = await batchStatus(fixture.svc, token, batchId);
    assertRecordInvariants(final, 4);
    assert.equal(final.upserted, 4);
    assert.equal((await allProducts(fixture.svc, token)).length, 4);
  });

  void test('a run stopped by a shutdown gives its count back, also when the database fails under it', async () => {
    const tenant = fixture.svc.tenant('closing');
    const token = await fixture.svc.token(tenant);
    const batchId = await storeBatch(tenant, [product()]);
    const controller = new AbortController();
    const closing: Database = {
      ...fixture.svc.service.db,
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
    assert.equal((await batchStatus(fixture.svc, token, batchId)).status, 'validating');
  });

  void test('a run after one that got nowhere reads nothing ahead; a preparation counts nothing', async () => {
    const tenant = fixture.svc.tenant('prepared');
    const processor = processorOn(fixture.svc.service.db, 2, 3);
    const failing = processorOn(losingConnection(fixture.svc.service.db), 2, 3);
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
