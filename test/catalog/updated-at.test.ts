/**
 * A product's `updated_at` (docs/reference.md §12.2): it moves only when an applied item changed what is
 * stored, or a variant was deleted, exactly when the history records a change; an item that changes
 * nothing leaves it, and is still counted as upserted.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { storedProduct } from '../helpers/assertions.ts';

const svc = testServiceForFile();

type Item = Record<string, unknown>;

/** Submits `items`, waits for the batch and asserts its counters: every item upserted. */
async function ingestAll(token: string, items: Item[]): Promise<void> {
  const batchId = await svc.submit(token, items);
  const status = await svc.waitForTerminal(token, batchId);
  assert.deepEqual(
    {
      status: status.status,
      upserted: status.upserted,
      failed: status.failed,
      validated_ok: status.validated_ok,
    },
    { status: 'completed', upserted: items.length, failed: 0, validated_ok: items.length },
  );
}

const updatedAt = async (token: string, id: string) =>
  String((await storedProduct(svc, token, id)).updated_at);

/** The actions of the product's history, newest first. */
async function actions(token: string, id: string): Promise<string[]> {
  const res = await svc.request({ method: 'GET', url: `/products/${id}/history`, token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: Array<{ action: string }> }>().data.map((entry) => entry.action);
}

/** Long enough that a write now would stamp a later millisecond. */
const aMomentLater = () => new Promise((resolve) => setTimeout(resolve, 5));

void test('an item that changes nothing keeps updated_at and records nothing; a change or a variant delete moves it', async () => {
  const token = await svc.token(svc.tenant('updated-at'));
  const first = variant({
    sku: 'ua-1',
    images: [
      { url: 'https://cdn.example/ua-front.jpg', angle: 0 },
      { url: 'https://cdn.example/ua-side.jpg' },
    ],
  });
  const second = variant({ sku: 'ua-2', color: 'Grey', price: 100 });
  const item = product({ external_id: 'ua', variants: [first, second] });
  await ingestAll(token, [item]);
  const created = await updatedAt(token, 'ua');
  assert.equal(String((await storedProduct(svc, token, 'ua')).created_at), created);
  assert.deepEqual(await actions(token, 'ua'), ['create']);

  // The same item again, and forms of it that store the same: one variant only (the other stays),
  // images absent (kept), one image of the two (merged by url), the price written as 1e2.
  await aMomentLater();
  const { images: _images, ...withoutImages } = first;
  await ingestAll(token, [
    item,
    { ...item, variants: [second] },
    { ...item, variants: [withoutImages] },
    { ...item, variants: [{ ...first, images: [{ url: 'https://cdn.example/ua-front.jpg', angle: 0 }] }] },
  ]);
  const resent = await svc.request({
    method: 'POST',
    url: '/products/ingestions',
    token,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ items: [{ ...item, variants: [{ ...second, price: 'PRICE' }] }] }).replace(
      '"PRICE"',
      '1e2',
    ),
  });
  assert.equal(resent.statusCode, 202, resent.body);
  assert.equal((await svc.waitForTerminal(token, resent.json<{ batch_id: string }>().batch_id)).upserted, 1);
  assert.equal(await updatedAt(token, 'ua'), created, 'unchanged items keep updated_at');
  assert.deepEqual(await actions(token, 'ua'), ['create'], 'and record nothing');

  // A change moves it, and is recorded.
  await aMomentLater();
  await ingestAll(token, [{ ...item, variants: [{ ...second, price: 120 }] }]);
  const changed = await updatedAt(token, 'ua');
  assert.ok(changed > created, `${changed} after ${created}`);
  assert.deepEqual(await actions(token, 'ua'), ['update', 'create']);

  // Two items that change a field and change it back: each was applied and changed what was
  // stored then, so both are recorded and updated_at moves, though the product ends as it was.
  await aMomentLater();
  await ingestAll(token, [{ ...item, name: 'Renamed' }, item]);
  const changedBack = await updatedAt(token, 'ua');
  assert.ok(changedBack > changed, `${changedBack} after ${changed}`);
  assert.deepEqual(await actions(token, 'ua'), ['update', 'update', 'update', 'create']);

  // A variant deleted moves it.
  await aMomentLater();
  const deleted = await svc.request({ method: 'DELETE', url: '/products/ua/variants/ua-1', token });
  assert.equal(deleted.statusCode, 204, deleted.body);
  const afterDelete = await updatedAt(token, 'ua');
  assert.ok(afterDelete > changedBack, `${afterDelete} after ${changedBack}`);

  // And an item that changes nothing after it still keeps it (the item above set the price back).
  await aMomentLater();
  await ingestAll(token, [{ ...item, variants: [second] }]);
  assert.equal(await updatedAt(token, 'ua'), afterDelete);
  assert.deepEqual(await actions(token, 'ua'), ['update', 'update', 'update', 'update', 'create']);
});

void test('in one batch, only the products an item changed move; created ones get the batch’s time', async () => {
  const token = await svc.token(svc.tenant('updated-at-batch'));
  const kept = product({ external_id: 'kept' });
  const moved = product({ external_id: 'moved' });
  await ingestAll(token, [kept, moved]);
  const [keptAt, movedAt] = [await updatedAt(token, 'kept'), await updatedAt(token, 'moved')];
  await aMomentLater();
  const added = product({ external_id: 'added' });
  await ingestAll(token, [kept, { ...moved, description: 'Now with a new description' }, added]);
  assert.equal(await updatedAt(token, 'kept'), keptAt);
  const [movedNow, addedAt] = [await updatedAt(token, 'moved'), await updatedAt(token, 'added')];
  assert.ok(movedNow > movedAt, `${movedNow} after ${movedAt}`);
  // One transaction's time: the chunk's update and its insert stamp the same millisecond.
  assert.equal(movedNow, addedAt);
  assert.deepEqual(await actions(token, 'kept'), ['create']);
  assert.deepEqual(await actions(token, 'moved'), ['update', 'create']);
  assert.deepEqual(await actions(token, 'added'), ['create']);
});
