import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { allProducts, assertProblem, ingestAndRead } from '../helpers/assertions.ts';
import { holdingTenant, processorOn, storeBatch } from '../helpers/stored-batch.ts';
import { NEEDS_SERVER } from '../helpers/state-shared-schema.ts';
import { sessionWaitsOn } from '../helpers/lock-waits.ts';
import { deleteVariant, lockProduct } from '../../src/catalog/catalog-delete.repository.ts';
import { tenantLockKey } from '../../src/worker/batch-worker.ts';

/** Deleting products and variants (docs/reference.md §10.5), through the real API and worker. */

type Item = Record<string, unknown>;

const svc = testServiceForFile();

const productUrl = (externalId: string) => `/products/${encodeURIComponent(externalId)}`;
const variantUrl = (externalId: string, sku: string) =>
  `${productUrl(externalId)}/variants/${encodeURIComponent(sku)}`;

const del = (url: string, token: string) => svc.request({ method: 'DELETE', url, token });
const get = (url: string, token: string) => svc.request({ method: 'GET', url, token });

function assertDeleted(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 204, res.body);
  assert.equal(res.body, '');
}

/** The value of `catalog_deletes_total` for `target` in the service's metrics (0 before the first). */
async function deletesCounted(target: 'product' | 'variant'): Promise<number> {
  const res = await svc.request({ method: 'GET', url: '/metrics' });
  const line = res.body.split('\n').find((l) => l.startsWith(`catalog_deletes_total{target="${target}"} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

async function freshTenant(prefix: string) {
  return svc.token(svc.tenant(prefix));
}

void describe('DELETE /products/{external_id}', () => {
  void test('204: the product and its variants are gone, the others untouched, and the delete is counted', async () => {
    const token = await freshTenant('del-product');
    const doomed = product({
      external_id: 'doomed',
      variants: [variant({ sku: 'd-1' }), variant({ sku: 'd-2' })],
    });
    const kept = [product({ external_id: 'a-kept' }), product({ external_id: 'z-kept' })];
    assert.equal((await ingestAndRead(svc, token, [doomed, ...kept])).final.status, 'completed');
    const keptBefore = await allProducts(svc, token).then((all) =>
      all.filter((p) => p.external_id !== 'doomed'),
    );
    const counted = await deletesCounted('product');

    assertDeleted(await del(productUrl('doomed'), token));

    assertProblem(await get(productUrl('doomed'), token), {
      slug: 'not-found',
      instance: '/products/doomed',
    });
    assert.deepEqual(await allProducts(svc, token), keptBefore);
    assert.equal(await deletesCounted('product'), counted + 1);
    // Its variants went with it: a variant delete finds no product, and a second delete no product.
    assertProblem(await del(variantUrl('doomed', 'd-1'), token), {
      slug: 'not-found',
      instance: '/products/doomed/variants/d-1',
    });
    assertProblem(await del(productUrl('doomed'), token), {
      slug: 'not-found',
      instance: '/products/doomed',
    });
    assert.equal(await deletesCounted('product'), counted + 1);
  });

  void test('its skus are free: a later batch gives them to another product without sku_conflict', async () => {
    const token = await freshTenant('del-sku');
    const owner = product({ external_id: 'owner', variants: [variant({ sku: 'reused' })] });
    assert.equal((await ingestAndRead(svc, token, [owner])).final.status, 'completed');
    assertDeleted(await del(productUrl('owner'), token));

    const heir = product({ external_id: 'heir', variants: [variant({ sku: 'reused', price: 10 })] });
    const { final, errors } = await ingestAndRead(svc, token, [heir]);
    assert.deepEqual(errors, []);
    assert.equal(final.status, 'completed');
    const stored = (await get(productUrl('heir'), token)).json<{ variants: Item[] }>();
    assert.deepEqual(
      stored.variants.map((v) => [v.sku, v.price]),
      [['reused', 10]],
    );
    assert.deepEqual(
      (await allProducts(svc, token)).map((p) => p.external_id),
      ['heir'],
    );
  });

  void test('a batch processed afterwards that names the product creates it again, as new', async () => {
    const token = await freshTenant('del-recreate');
    const original = product({
      external_id: 'phoenix',
      variants: [
        variant({ sku: 'p-1', images: [{ url: 'https://cdn.example/old.jpg', angle: 90 }] }),
        variant({ sku: 'p-2' }),
      ],
    });
    assert.equal((await ingestAndRead(svc, token, [original])).final.status, 'completed');
    const before = (await get(productUrl('phoenix'), token)).json<Item>();
    assertDeleted(await del(productUrl('phoenix'), token));

    const again = product({
      external_id: 'phoenix',
      name: 'Reborn',
      variants: [variant({ sku: 'p-2', images: [{ url: 'https://cdn.example/new.jpg', angle: 0 }] })],
    });
    assert.equal((await ingestAndRead(svc, token, [again])).final.status, 'completed');
    const after = (await get(productUrl('phoenix'), token)).json<{
      name: string;
      created_at: string;
      variants: Item[];
    }>();
    assert.equal(after.name, 'Reborn');
    assert.ok(after.created_at > (before.created_at as string), 'created anew, not restored');
    // Nothing of the deleted product survives: one variant, with only the new image.
    assert.deepEqual(
      after.variants.map((v) => [v.sku, v.images]),
      [['p-2', [{ url: 'https://cdn.example/new.jpg', angle: 0 }]]],
    );
  });

  void test('applies at once while the worker holds the tenant; a batch queued before it and run after recreates the product and takes its freed sku', async () => {
    const tenant = svc.tenant('del-order');
    const token = await svc.token(tenant);
    const stored = [
      product({ external_id: 'owner', variants: [variant({ sku: 'freed' })] }),
      product({ external_id: 'again', variants: [variant({ sku: 'old-1' })] }),
    ];
    assert.equal((await ingestAndRead(svc, token, stored)).final.status, 'completed');

    let batchId = '';
    // The worker's per-tenant lock, held as a batch of the tenant being processed holds it.
    const held = await svc.service.db.withLock(tenantLockKey(tenant), 10_000, async () => {
      batchId = await svc.submit(token, [
        product({ external_id: 'heir', variants: [variant({ sku: 'freed' })] }),
        product({ external_id: 'again', name: 'Again', variants: [variant({ sku: 'new-1' })] }),
      ]);
      assertDeleted(await del(productUrl('owner'), token));
      assertDeleted(await del(productUrl('again'), token));
      const waiting = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token });
      assert.equal(waiting.json<Item>().status, 'accepted');
    });
    assert.ok(held, 'the tenant lock was free');
    // A worker that found the lock taken left the batch to a later drain: ask for one now.
    await svc.service.queue.send({ tenantId: tenant, batchId: null });
    svc.service.queue.wake();
    const final = await svc.waitForTerminal(token, batchId, 60_000);
    assert.equal(final.status, 'completed');
    assert.deepEqual(await svc.allErrors(token, batchId), []);
    assert.deepEqual(
      (await allProducts(svc, token)).map((p) => [
        p.external_id,
        p.name,
        (p.variants as Item[]).map((v) => v.sku),
      ]),
      [
        ['again', 'Again', ['new-1']],
        ['heir', 'Linen sofa', ['freed']],
      ],
    );
  });

  void test('unknown → 404; another tenant’s → 404 and still stored', async () => {
    const owner = await freshTenant('del-owner');
    const other = await freshTenant('del-other');
    const item = product({ external_id: 'mine' });
    assert.equal((await ingestAndRead(svc, owner, [item])).final.status, 'completed');
    const before = await allProducts(svc, owner);

    assertProblem(await del(productUrl('mine'), other), { slug: 'not-found', instance: '/products/mine' });
    assertProblem(await del(productUrl('never-was'), owner), {
      slug: 'not-found',
      instance: '/products/never-was',
    });
    assertProblem(await del('/products/nul%00', owner), { slug: 'not-found', instance: '/products/nul%00' });
    assert.deepEqual(await allProducts(svc, owner), before);
  });

  void test('403 without catalog:write (catalog:read is not enough); nothing deleted', async () => {
    const tenant = svc.tenant('del-scope');
    const token = await svc.token(tenant);
    const reader = await svc.token(tenant, { scope: 'catalog:read ingestions:read ingestions:write' });
    const item = product({
      external_id: 'guarded',
      variants: [variant({ sku: 'g-1' }), variant({ sku: 'g-2' })],
    });
    assert.equal((await ingestAndRead(svc, token, [item])).final.status, 'completed');
    const before = await allProducts(svc, token);
    assertProblem(await del(productUrl('guarded'), reader), {
      slug: 'forbidden',
      instance: '/products/guarded',
    });
    assertProblem(await del(variantUrl('guarded', 'g-1'), reader), {
      slug: 'forbidden',
      instance: '/products/guarded/variants/g-1',
    });
    assert.deepEqual(await allProducts(svc, token), before);
  });

  void test('list paging stays exact after deletes', async () => {
    const token = await freshTenant('del-paging');
    const items = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((external_id) => product({ external_id }));
    assert.equal((await ingestAndRead(svc, token, items)).final.status, 'completed');
    for (const id of ['p2', 'p5']) assertDeleted(await del(productUrl(id), token));
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await get(`/products?${query}`, token)).json<{
        data: Item[];
        next_cursor: string | null;
      }>();
      pages.push(page.data.map((p) => p.external_id as string));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(pages, [
      ['p1', 'p3'],
      ['p4', 'p6'],
    ]);
  });
});

void describe('DELETE /products/{external_id}/variants/{sku}', () => {
  void test('204: that variant is gone, the product keeps the others in order, and its sku is free', async () => {
    const token = await freshTenant('del-variant');
    const item = product({
      external_id: 'trio',
      variants: [variant({ sku: 't-1' }), variant({ sku: 't-2' }), variant({ sku: 't-3' })],
    });
    assert.equal((await ingestAndRead(svc, token, [item])).final.status, 'completed');
    const before = (await get(productUrl('trio'), token)).json<{ variants: Item[] } & Item>();
    const counted = await deletesCounted('variant');

    assertDeleted(await del(variantUrl('trio', 't-2'), token));

    // The product changed: only its variants and its updated_at, which moves on so a client that
    // syncs by updated_at sees the delete.
    const after = (await get(productUrl('trio'), token)).json<{ variants: Item[] } & Item>();
    const { updated_at: updatedAfter, ...rest } = after;
    const { updated_at: updatedBefore, ...restBefore } = before;
    assert.deepEqual(rest, { ...restBefore, variants: before.variants.filter((v) => v.sku !== 't-2') });
    assert.ok(
      Date.parse(String(updatedAfter)) > Date.parse(String(updatedBefore)),
      `updated_at ${String(updatedAfter)} after ${String(updatedBefore)}`,
    );
    assert.equal(await deletesCounted('variant'), counted + 1);
    const { errors } = await ingestAndRead(svc, token, [
      product({ external_id: 'other', variants: [variant({ sku: 't-2' })] }),
    ]);
    assert.deepEqual(errors, []);
  });

  void test(
    'a chunk that waited on a variant delete’s row lock still moves updated_at past the delete’s',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      const db = svc.service.db;
      const tenant = svc.tenant('del-race');
      const token = await svc.token(tenant);
      const item = product({
        external_id: 'raced',
        variants: [variant({ sku: 'r-1' }), variant({ sku: 'r-2' })],
      });
      assert.equal((await ingestAndRead(svc, token, [item])).final.status, 'completed');

      // A variant delete that holds the product's row until the test lets it go on. Its backend is
      // known, so the wait below is this chunk's, not a statement of a test running beside it.
      let goOn: (() => void) | undefined;
      let backend!: (pid: number) => void;
      const deleteBackend = new Promise<number>((resolve) => (backend = resolve));
      const deleting = db.transaction(async (tx) => {
        assert.ok(await lockProduct(tx, tenant, 'raced'));
        const [own] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        backend(own!.pid);
        await new Promise<void>((resolve) => (goOn = resolve));
        await deleteVariant(tx, { tenantId: tenant, externalId: 'raced', sku: 'r-2' });
        const [row] = await tx.query<{ at: string }>(
          `SELECT to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
           FROM products WHERE tenant_id = $1 AND external_id = 'raced'`,
          [tenant],
        );
        return row!.at;
      });
      // A batch renaming the product: its chunk's transaction starts before the delete stamps the
      // product, then waits for the row (the lock its history takes before the upserts, lockProducts).
      // The tenant is held as a drain holds it, so the service's worker, which ran the first batch,
      // cannot also run this one.
      const renamed = { ...item, name: 'Renamed', variants: [(item.variants as unknown[])[0]] };
      const deletedAt = await holdingTenant(db, tenant, async () => {
        const batchId = await storeBatch(db, tenant, [renamed]);
        const processing = processorOn(db, 10).processBatch(tenant, batchId, new AbortController().signal);
        try {
          // A delete that failed before naming its backend fails the test rather than hanging it.
          const failedEarly = deleting.then(() => Promise.reject(new Error('the delete ended early')));
          failedEarly.catch(() => undefined); // it rejects on the normal path too, once the delete ends
          const pid = await Promise.race([deleteBackend, failedEarly]);
          assert.ok(await sessionWaitsOn(db, pid), 'the chunk never waited for the product row');
          await sleep(20);
        } finally {
          goOn?.(); // whatever happened above, the delete's transaction goes on and ends
        }
        const at = await deleting;
        assert.equal((await processing).status, 'completed');
        return at;
      });

      const after = (await get(productUrl('raced'), token)).json<{
        name: string;
        updated_at: string;
        variants: Item[];
      }>();
      assert.equal(after.name, 'Renamed');
      assert.deepEqual(
        after.variants.map((v) => v.sku),
        ['r-1'],
      );
      assert.ok(after.updated_at > deletedAt, `updated_at ${after.updated_at}, the delete's ${deletedAt}`);
    },
  );

  void test('a sku not on that product → 404 (unknown, another product’s, another tenant’s); nothing changes', async () => {
    const token = await freshTenant('del-variant-404');
    const otherTenant = await freshTenant('del-variant-404b');
    const items = [
      product({ external_id: 'one', variants: [variant({ sku: 'o-1' }), variant({ sku: 'o-2' })] }),
      product({ external_id: 'two', variants: [variant({ sku: 'w-1' }), variant({ sku: 'w-2' })] }),
    ];
    assert.equal((await ingestAndRead(svc, token, items)).final.status, 'completed');
    const before = await allProducts(svc, token);
    const cases: Array<[string, string, string]> = [
      ['one', 'nope', token],
      ['one', 'w-1', token],
      ['none', 'o-1', token],
      ['one', 'o-1', otherTenant],
    ];
    for (const [externalId, sku, caller] of cases) {
      assertProblem(await del(variantUrl(externalId, sku), caller), {
        slug: 'not-found',
        instance: `/products/${externalId}/variants/${sku}`,
      });
    }
    assert.deepEqual(await allProducts(svc, token), before);
  });

  void test('the product’s last variant → 409 conflict; the product stays as it was', async () => {
    const token = await freshTenant('del-last');
    const item = product({ external_id: 'solo', variants: [variant({ sku: 's-1' })] });
    assert.equal((await ingestAndRead(svc, token, [item])).final.status, 'completed');
    const before = (await get(productUrl('solo'), token)).json<Item>();
    const body = assertProblem(await del(variantUrl('solo', 's-1'), token), {
      slug: 'conflict',
      instance: '/products/solo/variants/s-1',
    });
    assert.equal(body.detail, 'This is the product’s last variant; delete the product instead.');
    assert.deepEqual((await get(productUrl('solo'), token)).json(), before);
  });

  void test('two deletes of a product’s last two variants at once: one 204, one 409, one variant left', async () => {
    const token = await freshTenant('del-race');
    const item = product({
      external_id: 'pair',
      variants: [variant({ sku: 'x-1' }), variant({ sku: 'x-2' })],
    });
    assert.equal((await ingestAndRead(svc, token, [item])).final.status, 'completed');
    const answers = await Promise.all([
      del(variantUrl('pair', 'x-1'), token),
      del(variantUrl('pair', 'x-2'), token),
    ]);
    assert.deepEqual(answers.map((r) => r.statusCode).sort(), [204, 409]);
    const left = (await get(productUrl('pair'), token)).json<{ variants: Item[] }>();
    assert.equal(left.variants.length, 1);
  });
});
