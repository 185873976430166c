import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { storeBatch as storeBatchIn } from '../helpers/stored-batch.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { batchStatus, countersOf } from '../helpers/state-assertions.ts';
import type { Database, Queryable } from '../../src/db/database.ts';
import { createBatchProcessor, type BatchProcessor } from '../../src/ingestion/batch-processor.ts';
import { createBatchWorker } from '../../src/ingestion/batch-worker.ts';
import { createItemValidator } from '../../src/ingestion/item-validator.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';

/**
 * On a server, the worker prepares a tenant's next batch (parse, validate, merge against the
 * catalog) while the current one is being written; on the embedded database, which runs on the
 * worker's own thread, it does not. These tests drain stored batches with a worker of their own and
 * check that what the client sees is exactly what one-batch-at-a-time processing gives.
 */

const onServer = () => svc.service.db.kind === 'server';

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
 * `holdFirstWrite`, the first transaction that writes variants waits before committing until a
 * look-up has run outside any transaction (the next batch's preparation), so that look-up surely
 * reads the catalog as it was before that write.
 */
function instrumented(db: Database, { holdFirstWrite = false } = {}) {
  let lookups = 0;
  let bodyReads = 0;
  let preparedLookup = () => undefined as void;
  const preparedLookupRan = new Promise<void>((resolve) => (preparedLookup = resolve));
  let held: boolean | null = null;
  const counting = <Q extends Queryable>(
    q: Q,
    inTransaction: boolean,
    onQuery = (_text: string) => {},
  ): Q => ({
    ...q,
    async query(text: string, params?: readonly unknown[]) {
      onQuery(text);
      if (BODY_READ.test(text)) bodyReads++;
      if (SKU_LOOKUP.test(text)) {
        lookups++;
        if (!inTransaction) preparedLookup();
      }
      return q.query(text, params);
    },
  });
  const counted: Database = {
    ...counting(db, false),
    transaction: (fn) =>
      db.transaction(async (tx) => {
        let wroteVariants = false;
        const value = await fn(
          counting(tx, true, (text) => (wroteVariants ||= /INSERT INTO variants/.test(text))),
        );
        if (holdFirstWrite && wroteVariants && held === null) {
          held = await Promise.race([preparedLookupRan.then(() => true), sleep(10_000).then(() => false)]);
        }
        return value;
      }),
  };
  return {
    db: counted,
    lookups: () => lookups,
    bodyReads: () => bodyReads,
    heldForPreparedLookup: () => held,
  };
}

/** Drains `tenant` with a worker of its own; returns which batches were run with a prepared copy. */
async function drain(tenant: string, options: { holdFirstWrite?: boolean; chunkSize?: number } = {}) {
  const { db, lookups, bodyReads, heldForPreparedLookup } = instrumented(svc.service.db, options);
  const processor: BatchProcessor = createBatchProcessor({
    db,
    validateItem: createItemValidator(),
    chunkSize: options.chunkSize ?? 1000,
    maxAttempts: 3,
  });
  const preparedRuns: string[] = [];
  const watched: BatchProcessor = {
    ...processor,
    async processBatch(tenantId, batchId, signal, pipeline) {
      if (pipeline?.prepared?.batchId === batchId) preparedRuns.push(batchId);
      return processor.processBatch(tenantId, batchId, signal, pipeline);
    },
  };
  const worker = createBatchWorker({
    db,
    queue: svc.service.queue,
    processor: watched,
    metrics: createMetrics({ defaults: false }),
    log: pino({ level: 'silent' }),
    concurrency: 1,
  });
  await worker.drainTenant(tenant);
  return {
    preparedRuns,
    lookups: lookups(),
    bodyReads: bodyReads(),
    heldForPreparedLookup: heldForPreparedLookup(),
  };
}

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
 * - `same-chunk`: the first batch is one chunk, so the sku is known to be written when the second
 *   is prepared: its items are kept unmerged, and merged once, in its turn.
 * - `later-chunk`: the owner is in the first batch's second chunk (2 items a chunk), written after
 *   the second batch was merged ahead; the first write is held until that merge's look-up ran, so
 *   the look-up surely read the catalog before the sku was written, and the merge must be redone.
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

  const { preparedRuns, lookups, bodyReads, heldForPreparedLookup } = await drain(
    tenant,
    laterChunk ? { holdFirstWrite: true, chunkSize: 2 } : {},
  );

  assert.deepEqual(preparedRuns, onServer() ? [second] : []);
  if (laterChunk) {
    // A look-up per chunk of the first batch; the second batch's merge ahead read a sku the first
    // then wrote, so its look-up and merge were run again, on its items read again: a merged
    // prepared batch keeps none.
    assert.equal(heldForPreparedLookup, true);
    assert.equal(lookups, onServer() ? 4 : 3);
    assert.equal(bodyReads, onServer() ? 3 : 2);
  } else {
    // The second batch was read once, ahead of its turn, and merged once, in its turn.
    assert.equal(lookups, 2);
    assert.equal(bodyReads, 2);
  }
  const firstCount = laterChunk ? 3 : 1;
  assert.deepEqual(countersOf(await batchStatus(svc, token, first)), {
    status: 'completed',
    received_count: firstCount,
    validated_ok: firstCount,
    validated_failed: 0,
    upserted: firstCount,
    failed: 0,
  });
  assert.deepEqual(countersOf(await batchStatus(svc, token, second)), {
    status: 'completed_with_errors',
    received_count: 2,
    validated_ok: 2,
    validated_failed: 0,
    upserted: 1,
    failed: 1,
  });
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
  void test('a batch prepared while the one before it writes the same sku is merged once, after that write', () =>
    overlappingBatches('same-chunk'));

  void test(
    'a prepared merge that surely read the catalog before the batch ahead wrote its sku is redone',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    () => overlappingBatches('later-chunk'),
  );

  void test('a batch kept unmerged ahead of its turn reads its items again only for its later chunks', async () => {
    const tenant = svc.tenant('pipeline-kept-chunks');
    const token = await svc.token(tenant);
    const sku = `sku-${randomUUID()}`;
    const owner = product({
      variants: [variant({ sku, images: [{ url: 'https://cdn.example/a.jpg', angle: 10 }] })],
    });
    const first = await storeBatch(tenant, [owner]);
    const again = { ...owner, variants: [variant({ sku, images: [{ url: 'https://cdn.example/b.jpg' }] })] };
    const second = await storeBatch(tenant, [again, product(), product()]);

    const { preparedRuns, lookups, bodyReads } = await drain(tenant, { chunkSize: 2 });

    // The second batch's first chunk names the sku the first batch writes: on a server it is kept
    // unmerged and merged in its turn, and only its second chunk needs the body read again.
    assert.deepEqual(preparedRuns, onServer() ? [second] : []);
    assert.equal(lookups, 3);
    assert.equal(bodyReads, onServer() ? 3 : 2);
    assert.equal((await batchStatus(svc, token, first)).status, 'completed');
    assert.deepEqual(countersOf(await batchStatus(svc, token, second)), {
      status: 'completed',
      received_count: 3,
      validated_ok: 3,
      validated_failed: 0,
      upserted: 3,
      failed: 0,
    });
    await assertImagesMerged(token, owner.external_id as string, sku);
    const products = await svc.request({ method: 'GET', url: '/products?limit=10', token });
    assert.equal(products.json<{ data: unknown[] }>().data.length, 3);
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

    assert.deepEqual(preparedRuns, onServer() ? ids.slice(1) : []);
    assert.equal(lookups, 3);
    assert.equal(bodyReads, 3);
    const statuses = await Promise.all(ids.map(async (id) => (await batchStatus(svc, token, id)).status));
    assert.deepEqual(statuses, ['completed', 'completed_with_errors', 'completed']);
    const products = await svc.request({ method: 'GET', url: '/products?limit=10', token });
    assert.equal(products.json<{ data: unknown[] }>().data.length, 4);
  });

  void test('a prepared batch of several chunks reads its items again for the chunks after the first', async () => {
    const tenant = svc.tenant('pipeline-chunks');
    const token = await svc.token(tenant);
    const ids = [
      await storeBatch(tenant, [product(), product(), product()]),
      await storeBatch(tenant, [product(), 'not an object', product()]),
    ];

    const { preparedRuns, lookups, bodyReads } = await drain(tenant, { chunkSize: 2 });

    // Two chunks a batch, each merged once; the first batch is read once, the second (prepared on
    // a server) once ahead and once more for its second chunk.
    assert.deepEqual(preparedRuns, onServer() ? ids.slice(1) : []);
    assert.equal(lookups, 4);
    assert.equal(bodyReads, onServer() ? 3 : 2);
    assert.deepEqual(countersOf(await batchStatus(svc, token, ids[0]!)), {
      status: 'completed',
      received_count: 3,
      validated_ok: 3,
      validated_failed: 0,
      upserted: 3,
      failed: 0,
    });
    assert.deepEqual(countersOf(await batchStatus(svc, token, ids[1]!)), {
      status: 'completed_with_errors',
      received_count: 3,
      validated_ok: 2,
      validated_failed: 1,
      upserted: 2,
      failed: 1,
    });
    const products = await svc.request({ method: 'GET', url: '/products?limit=10', token });
    assert.equal(products.json<{ data: unknown[] }>().data.length, 5);
  });
});
