import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { processorOn, storeBatch as storeBatchIn, workerOn } from '../helpers/stored-batch.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { batchStatus, assertBatchCounters } from '../helpers/assertions.ts';
import type { Database, Queryable } from '../../src/db/database.ts';
import type { BatchProcessor } from '../../src/worker/batch-processor.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

/**
 * The worker prepares a tenant's next batch (parse, validate, merge its items with each other) once
 * the current one's rows are on their way: on a server the two overlap; on the embedded database
 * the preparation's reads wait for the write to commit. Either way the same batches are prepared
 * and read the same number of times. The merge reads nothing stored: the upsert folds the rows into
 * the catalog, and the stored variants are read only when a sku turns out to belong to another
 * product. These tests drain stored batches with a worker of their own and check that what the
 * client sees is exactly what one-batch-at-a-time processing gives.
 */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

const storeBatch = (tenantId: string, items: unknown[]) => storeBatchIn(svc.service.db, tenantId, items);

const SKU_LOOKUP = /FROM unnest\(\$2::text\[\]\) AS k\(sku\)/;
const BODY_READ = /SELECT body FROM batch_payloads/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The database, counting the catalog's sku look-ups and the reads of batch bodies. With
 * `holdFirstWrite`, the first transaction that writes variants waits before committing until
 * `released` resolves (the next batch's preparation has finished), so that preparation surely
 * merged that batch's items before the catalog held what the first batch writes.
 */
function instrumented(db: Database, released: Promise<void>, { holdFirstWrite = false } = {}) {
  let lookups = 0;
  let bodyReads = 0;
  let held: boolean | null = null;
  const counting = <Q extends Queryable>(q: Q, onQuery = (_text: string) => {}): Q => ({
    ...q,
    async query(text: string, params?: readonly unknown[]) {
      onQuery(text);
      if (BODY_READ.test(text)) bodyReads++;
      if (SKU_LOOKUP.test(text)) lookups++;
      return q.query(text, params);
    },
  });
  const counted: Database = {
    ...counting(db),
    transaction: (fn) =>
      db.transaction(async (tx) => {
        let wroteVariants = false;
        const value = await fn(counting(tx, (text) => (wroteVariants ||= /INSERT INTO variants/.test(text))));
        if (holdFirstWrite && wroteVariants && held === null) {
          held = await Promise.race([released.then(() => true), sleep(10_000).then(() => false)]);
        }
        return value;
      }),
  };
  return {
    db: counted,
    lookups: () => lookups,
    bodyReads: () => bodyReads,
    heldForPreparation: () => held,
  };
}

/** Drains `tenant` with a worker of its own; returns which batches were run with a prepared copy. */
async function drain(tenant: string, options: { holdFirstWrite?: boolean; chunkSize?: number } = {}) {
  let prepared = () => undefined as void;
  const preparedOne = new Promise<void>((resolve) => (prepared = resolve));
  const { db, lookups, bodyReads, heldForPreparation } = instrumented(svc.service.db, preparedOne, options);
  const processor = processorOn(db, options.chunkSize ?? 1000);
  const preparedRuns: string[] = [];
  const watched: BatchProcessor = {
    ...processor,
    async prepareBatch(tenantId, batchId) {
      const batch = await processor.prepareBatch(tenantId, batchId);
      prepared();
      return batch;
    },
    async processBatch(tenantId, batchId, signal, pipeline) {
      if (pipeline?.prepared?.batchId === batchId) preparedRuns.push(batchId);
      return processor.processBatch(tenantId, batchId, signal, pipeline);
    },
  };
  const worker = workerOn({ db, queue: svc.service.queue, processor: watched });
  await worker.drainTenant(tenant);
  return {
    preparedRuns,
    lookups: lookups(),
    bodyReads: bodyReads(),
    heldForPreparation: heldForPreparation(),
  };
}

/** How many products the tenant of `token` has (at most 10). */
const productCount = async (token: string) => {
  const res = await svc.request({ method: 'GET', url: '/products?limit=10', token });
  return res.json<{ data: unknown[] }>().data.length;
};

/** The owner's one variant holds the image the first batch stored and the one the second added. */
const assertImagesMerged = async (token: string, externalId: string, sku: string) => {
  const res = await svc.request({ method: 'GET', url: `/products/${externalId}`, token });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json<{ variants: unknown[] }>().variants, [
    {
      ...(variant({ sku }) as object),
      sku,
      images: [
        { url: 'https://cdn.example/a.jpg', angle: 10 },
        { url: 'https://cdn.example/b.jpg', angle: null },
      ],
    },
  ]);
};

/**
 * Two batches of one tenant: the first stores a product with a sku and an image; the second gives
 * that sku to another product (a sku_conflict once the first is stored) and then sends the owner
 * again with one more image (merged with the stored one).
 *
 * - `same-chunk`: the first batch is one chunk.
 * - `later-chunk`: the owner is in the first batch's second chunk (2 items a chunk); the first
 *   batch's first write is held until the second batch has been prepared, so the second was surely
 *   merged before the sku was written.
 *
 * Either way the second batch is merged once, reading nothing stored; its upsert finds the sku
 * taken, and its chunk is merged again against the catalog (one look-up, on its items read again).
 */
async function overlappingBatches(mode: 'same-chunk' | 'later-chunk'): Promise<void> {
  const tenant = svc.tenant('pipeline-overlap');
  const token = await svc.token(tenant);
  const sku = `sku-${randomUUID()}`;
  const owner = product({
    variants: [variant({ sku, images: [{ url: 'https://cdn.example/a.jpg', angle: 10 }] })],
  });
  const laterChunk = mode === 'later-chunk';
  const first = await storeBatch(tenant, laterChunk ? [product(), product(), owner] : [owner]);
  // The same sku for another product (a conflict only once the first batch is stored), then the
  // owner again with one more image (merged with the image the first batch stores).
  const thief = product({ variants: [variant({ sku })] });
  const again = {
    ...owner,
    variants: [variant({ sku, images: [{ url: 'https://cdn.example/b.jpg' }] })],
  };
  const second = await storeBatch(tenant, [thief, again]);

  const { preparedRuns, lookups, bodyReads, heldForPreparation } = await drain(
    tenant,
    laterChunk ? { holdFirstWrite: true, chunkSize: 2 } : {},
  );

  assert.deepEqual(preparedRuns, [second]);
  if (laterChunk) assert.equal(heldForPreparation, true);
  // Each batch read once (the second ahead of its turn), and the second once
  // more, with the one look-up, when its upsert found the sku taken.
  assert.equal(lookups, 1);
  assert.equal(bodyReads, 3);
  const firstCount = laterChunk ? 3 : 1;
  await assertBatchCounters(svc, token, first, 'completed', [firstCount, firstCount, 0, firstCount, 0]);
  await assertBatchCounters(svc, token, second, 'completed_with_errors', [2, 2, 0, 1, 1]);
  const errors = await svc.allErrors(token, second);
  assert.deepEqual(
    errors.map((e) => ({
      index: e.index,
      codes: (e.errors as Array<{ code: string }>).map((x) => x.code),
    })),
    [{ index: 0, codes: ['sku_conflict'] }],
  );
  await assertImagesMerged(token, owner.external_id as string, sku);
}

void describe('batches prepared ahead of their turn', () => {
  void test('a batch giving a sku of the batch before it to another product is merged against the catalog in its turn', () =>
    overlappingBatches('same-chunk'));

  void test(
    'a batch merged ahead, before the batch ahead wrote its sku, still rejects the item that takes it',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    () => overlappingBatches('later-chunk'),
  );

  void test('a batch sending the products of the batch before it again is merged ahead, reading nothing stored', async () => {
    const tenant = svc.tenant('pipeline-resent');
    const token = await svc.token(tenant);
    const sku = `sku-${randomUUID()}`;
    const owner = product({
      variants: [variant({ sku, images: [{ url: 'https://cdn.example/a.jpg', angle: 10 }] })],
    });
    const first = await storeBatch(tenant, [owner]);
    const again = { ...owner, variants: [variant({ sku, images: [{ url: 'https://cdn.example/b.jpg' }] })] };
    const second = await storeBatch(tenant, [again, product(), product()]);

    const { preparedRuns, lookups, bodyReads } = await drain(tenant, { chunkSize: 2 });

    // The second batch is prepared while the first writes the same sku, and its rows
    // hold: the upsert folds its image into the stored one. Only its second chunk reads the body again.
    assert.deepEqual(preparedRuns, [second]);
    assert.equal(lookups, 0);
    assert.equal(bodyReads, 3);
    assert.equal((await batchStatus(svc, token, first)).status, 'completed');
    await assertBatchCounters(svc, token, second, 'completed', [3, 3, 0, 3, 0]);
    await assertImagesMerged(token, owner.external_id as string, sku);
    assert.equal(await productCount(token), 3);
  });

  void test('a taken sku in a chunk before the last is merged again from the items the run still holds', async () => {
    const tenant = svc.tenant('pipeline-taken-early');
    const token = await svc.token(tenant);
    const owner = product();
    const first = await storeBatch(tenant, [owner]);
    const takes = product({
      variants: [variant({ sku: (owner.variants as Array<{ sku: string }>)[0]!.sku })],
    });
    const second = await storeBatch(tenant, [takes, product(), product()]);

    const { preparedRuns, lookups, bodyReads } = await drain(tenant, { chunkSize: 2 });

    // The second batch was prepared ahead and holds no items: its body is read ahead, and again to
    // merge the first chunk against the catalog; the run keeps those items for its second chunk.
    assert.deepEqual(preparedRuns, [second]);
    assert.equal(lookups, 1);
    assert.equal(bodyReads, 3);
    assert.equal((await batchStatus(svc, token, first)).status, 'completed');
    await assertBatchCounters(svc, token, second, 'completed_with_errors', [3, 3, 0, 2, 1]);
    const errors = await svc.allErrors(token, second);
    assert.deepEqual(
      errors.map((e) => [e.index, (e.errors as Array<{ code: string }>).map((x) => x.code)]),
      [[0, ['sku_conflict']]],
    );
    assert.equal(await productCount(token), 3);
  });

  void test('batches with skus of their own are merged once, ahead of their turn', async () => {
    const tenant = svc.tenant('pipeline-disjoint');
    const token = await svc.token(tenant);
    const ids = [
      await storeBatch(tenant, [product(), product()]),
      await storeBatch(tenant, [product(), 'not an object']),
      await storeBatch(tenant, [product()]),
    ];

    const { preparedRuns, lookups, bodyReads } = await drain(tenant);

    assert.deepEqual(preparedRuns, ids.slice(1));
    assert.equal(lookups, 0);
    assert.equal(bodyReads, 3);
    const statuses = await Promise.all(ids.map(async (id) => (await batchStatus(svc, token, id)).status));
    assert.deepEqual(statuses, ['completed', 'completed_with_errors', 'completed']);
    assert.equal(await productCount(token), 4);
  });

  void test('a prepared batch of several chunks reads its items again for the chunks after the first', async () => {
    const tenant = svc.tenant('pipeline-chunks');
    const token = await svc.token(tenant);
    const ids = [
      await storeBatch(tenant, [product(), product(), product()]),
      await storeBatch(tenant, [product(), 'not an object', product()]),
    ];

    const { preparedRuns, lookups, bodyReads } = await drain(tenant, { chunkSize: 2 });

    // Two chunks a batch, each merged once; the first batch is read once, the second (prepared)
    // once ahead and once more for its second chunk.
    assert.deepEqual(preparedRuns, ids.slice(1));
    assert.equal(lookups, 0);
    assert.equal(bodyReads, 3);
    await assertBatchCounters(svc, token, ids[0]!, 'completed', [3, 3, 0, 3, 0]);
    await assertBatchCounters(svc, token, ids[1]!, 'completed_with_errors', [3, 2, 1, 2, 1]);
    assert.equal(await productCount(token), 5);
  });
});
