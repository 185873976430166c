import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { processorOn, storeBatch as storeBatchIn, workerOn } from '../helpers/stored-batch.ts';
import { errorShapes, product, skuOf, thief, variant, withoutName } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertBatchCounters,
  assertCounters,
  batchStatus,
  countersOf,
} from '../helpers/assertions.ts';
import type { Database, Queryable } from '../../src/db/database.ts';
import type { BatchProcessor } from '../../src/worker/batch-processor.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';
import { sessionWaitsOn } from '../helpers/lock-waits.ts';

/**
 * How a batch's chunks reach the catalog (src/worker/batch-processor.ts, chunk-merge.ts,
 * chunk-recovery.ts): prepared ahead of their turn, merged again against the catalog when a sku
 * turns out to be taken, and written item by item when a chunk's write fails on its data.
 *
 * The worker prepares a tenant's next batch (parse, validate, merge its items with each other) once
 * the current one's rows are on their way: on a server the two overlap; on the embedded database
 * the preparation's reads wait for the write to commit. Either way the same batches are prepared
 * and read the same number of times. The merge reads nothing stored: the upsert folds the rows into
 * the catalog, and the stored variants are read only when a sku turns out to belong to another
 * product. The tests of preparation drain stored batches with a worker of their own and check that
 * what the client sees is exactly what one-batch-at-a-time processing gives.
 */

const svc = testServiceForFile();

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

/**
 * Drains `tenant` with a worker of its own; returns which batches were run with a prepared copy.
 * `beforeRun` is awaited as each run starts, after the drain has looked for the batches after it.
 */
async function drain(
  tenant: string,
  options: {
    holdFirstWrite?: boolean;
    chunkSize?: number;
    beforeRun?: (batchId: string) => Promise<void>;
  } = {},
) {
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
      await options.beforeRun?.(batchId);
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

  void test('a batch submitted after the drain looked, while the one before it runs, is still prepared ahead', async () => {
    const tenant = svc.tenant('pipeline-late');
    const token = await svc.token(tenant);
    const first = await storeBatch(tenant, [product(), product()]);
    let second: string | undefined;
    // Stored as the first batch's run starts: the drain found no batch after the first.
    const beforeRun = async (batchId: string) => {
      if (batchId === first) second = await storeBatch(tenant, [product(), 'not an object']);
    };

    const { preparedRuns, lookups, bodyReads } = await drain(tenant, { beforeRun });

    assert.ok(second);
    assert.deepEqual(preparedRuns, [second]);
    assert.equal(lookups, 0);
    assert.equal(bodyReads, 2);
    await assertBatchCounters(svc, token, first, 'completed', [2, 2, 0, 2, 0]);
    await assertBatchCounters(svc, token, second, 'completed_with_errors', [2, 1, 1, 1, 1]);
    assert.equal(await productCount(token), 3);
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

void describe('a chunk whose write fails', () => {
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
    const status = await batchStatus(svc, token, batchId);
    const errors = await svc.allErrors(token, batchId);
    const products = await allProducts(svc, token);
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
    // Reading the body fails once the batch is prepared (the prepared items read through this database).
    let reads = 0;
    let readable = true;
    const db: Database = {
      ...svc.service.db,
      query<R>(text: string, params?: readonly unknown[]) {
        if (!readable && text.includes('SELECT body FROM batch_payloads')) {
          reads++;
          return Promise.reject(new Error('heap out of memory'));
        }
        return svc.service.db.query<R>(text, params);
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
    assert.deepEqual(countersOf(await batchStatus(svc, token, batchId)), {
      status: 'processing',
      received_count: 1,
      validated_ok: 1,
      validated_failed: 0,
      upserted: 0,
      failed: 0,
    });
    const errors = await svc.request({
      method: 'GET',
      url: `/products/ingestions/${batchId}/errors`,
      token,
    });
    assert.deepEqual(errors.json<{ data: unknown[] }>().data, []);
    // The chunk's transaction was rolled back: the thief's product was not stored, the owner is as it was.
    assert.deepEqual(await allProducts(svc, token), ownerBefore);
  });
});

/**
 * A delete of a stored product, holding its row until `commit` lets it commit (and waits for that):
 * how a test puts a concurrent delete in a chunk's way. `blocksAnother` resolves once a statement of
 * another session waits for the delete's locks (false after 10 s).
 */
function heldDelete(
  db: Database,
  tenantId: string,
  externalId: string,
): { blocksAnother(): Promise<boolean>; commit(): Promise<void> } {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let deleted!: (pid: number) => void;
  const backend = new Promise<number>((resolve) => (deleted = resolve));
  const deleting = db.transaction(async (tx) => {
    const [own] = await tx.query<{ pid: number }>(
      'DELETE FROM products WHERE tenant_id = $1 AND external_id = $2 RETURNING pg_backend_pid() AS pid',
      [tenantId, externalId],
    );
    deleted(own!.pid);
    await released;
  });
  return {
    async blocksAnother() {
      return sessionWaitsOn(db, await backend);
    },
    commit() {
      release();
      return deleting;
    },
  };
}

void describe('the rare path against a concurrent delete', () => {
  void test(
    'a chunk merged again against the catalog reads it under its products’ locks: a delete in between brings no image back',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      const db = svc.service.db;
      const tenant = svc.tenant('recovery-delete');
      const token = await svc.token(tenant);
      const old = { url: 'https://cdn.example/old.jpg', angle: 90 };
      const fresh = { url: 'https://cdn.example/new.jpg', angle: 0 };
      const sku = `sku-${randomUUID()}`;
      const stored = product({ variants: [variant({ sku, images: [old] })] });
      assert.equal((await svc.waitForTerminal(token, await svc.submit(token, [stored]))).status, 'completed');

      const deleting = heldDelete(db, tenant, stored.external_id as string);
      // The product again with a new image, and a thief of its sku after it in the same chunk: the
      // chunk's merge rejects the thief, so the chunk takes the rare path and reads the catalog.
      const again = { ...stored, variants: [variant({ sku, images: [fresh] })] };
      const batchId = await storeBatch(tenant, [again, thief(sku)]);
      const processing = processorOn(db, 10).processBatch(tenant, batchId, new AbortController().signal);

      // The run now waits for a lock the delete holds (before or after it read the catalog).
      assert.equal(await deleting.blocksAnother(), true);
      await deleting.commit();
      await processing;

      // Had it read before the delete committed, the old image would be back beside the new one.
      const res = await svc.request({
        method: 'GET',
        url: `/products/${stored.external_id as string}`,
        token,
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        res
          .json<{ variants: Array<{ sku: string; images: unknown[] }> }>()
          .variants.map((v) => [v.sku, v.images]),
        [[sku, [fresh]]],
      );
      await assertBatchCounters(svc, token, batchId, 'completed_with_errors', [2, 2, 0, 1, 1]);
    },
  );
});

/**
 * `db` whose reader (`Database.reader`, a server's) calls `beforeRead` before each of its queries: to
 * count the reads made beside a chunk's transaction, or to make them fail.
 */
function withReader(db: Database, beforeRead: () => void): Database {
  const reader = db.reader;
  assert.ok(reader, 'a server database has a reader');
  return {
    ...db,
    reader: {
      ...reader,
      async query<R>(text: string, params?: readonly unknown[]) {
        beforeRead();
        return reader.query<R>(text, params);
      },
    },
  };
}

/** A product's history entries over HTTP, newest first (its first page). */
async function historyOf(token: string, externalId: string): Promise<Array<Record<string, unknown>>> {
  const res = await svc.request({ method: 'GET', url: `/products/${externalId}/history`, token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: Array<Record<string, unknown>> }>().data;
}

void describe('the history read beside a chunk’s transaction', () => {
  const onServer = { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER };

  void test(
    'a chunk reads the rows its history compares under its products’ locks: after a delete commits, its entry is a create',
    onServer,
    async () => {
      const db = svc.service.db;
      let reads = 0;
      const counted = withReader(db, () => reads++);
      const tenant = svc.tenant('history-delete');
      const token = await svc.token(tenant);
      const sku = `sku-${randomUUID()}`;
      const stored = product({ variants: [variant({ sku, price: 100 })] });
      assert.equal((await svc.waitForTerminal(token, await svc.submit(token, [stored]))).status, 'completed');

      const deleting = heldDelete(db, tenant, stored.external_id as string);
      const again = { ...stored, variants: [variant({ sku, price: 90 })] };
      const batchId = await storeBatch(tenant, [again]);
      const processing = processorOn(counted, 10).processBatch(tenant, batchId, new AbortController().signal);

      // The chunk waits for the delete (on its products' lock); its read comes after that lock.
      assert.equal(await deleting.blocksAnother(), true);
      await deleting.commit();
      await processing;
      assert.equal(reads, 1);

      // Had the read seen the deleted row, the entry would be an update of the price, 100 → 90.
      const entries = await historyOf(token, stored.external_id as string);
      assert.deepEqual(
        entries.map((entry) => entry.action),
        ['create', 'create'],
      );
      const { at, ...recreated } = entries[0]!;
      assert.match(String(at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // docs/reference.md §11.3: the whole product at path "", in the docs/reference.md §9 shape; no `label`, as the batch has none.
      assert.deepEqual(recreated, {
        action: 'create',
        batch_id: batchId,
        index: 0,
        diff: [{ path: '', op: 'add', to: again }],
      });
      await assertBatchCounters(svc, token, batchId, 'completed', [1, 1, 0, 1, 0]);
    },
  );

  void test(
    'a chunk whose read fails (a lock timeout) writes nothing: catalog and history as they were; run again, it records once',
    onServer,
    async () => {
      const db = svc.service.db;
      const tenant = svc.tenant('history-read-fails');
      const token = await svc.token(tenant);
      const sku = `sku-${randomUUID()}`;
      const stored = product({ variants: [variant({ sku, price: 100 })] });
      assert.equal((await svc.waitForTerminal(token, await svc.submit(token, [stored]))).status, 'completed');
      const catalogBefore = await allProducts(svc, token);
      const historyBefore = await historyOf(token, stored.external_id as string);

      const batchId = await storeBatch(tenant, [{ ...stored, variants: [variant({ sku, price: 90 })] }]);
      const timingOut = withReader(db, () => {
        throw Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' });
      });
      // Not a data error: the run fails whole, for the queue to retry, and its transaction rolls back.
      await assert.rejects(
        processorOn(timingOut, 10).processBatch(tenant, batchId, new AbortController().signal),
        { code: '55P03' },
      );
      assert.deepEqual(await allProducts(svc, token), catalogBefore);
      assert.deepEqual(await historyOf(token, stored.external_id as string), historyBefore);
      await assertBatchCounters(svc, token, batchId, 'processing', [1, 1, 0, 0, 0]);

      await processorOn(db, 10).processBatch(tenant, batchId, new AbortController().signal);
      const entries = await historyOf(token, stored.external_id as string);
      assert.deepEqual(
        entries.map((entry) => [entry.action, entry.batch_id, entry.diff]),
        [
          ['update', batchId, [{ path: 'variants[0].price', op: 'change', sku, from: 100, to: 90 }]],
          ...historyBefore.map((entry) => [entry.action, entry.batch_id, entry.diff]),
        ],
      );
      await assertBatchCounters(svc, token, batchId, 'completed', [1, 1, 0, 1, 0]);
    },
  );
});
