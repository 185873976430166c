import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { callService, stopProcess, type ServiceProcess } from '../helpers/process-service.ts';
import { serviceProcessesForFile } from '../helpers/file-fixture.ts';
import { TERMINAL, type StatusRecord } from '../helpers/assertions.ts';

/**
 * docs/reference.md §11.3 under a crash: the service killed (SIGKILL) in the middle of an update batch leaves
 * each product's history exactly as its catalog row (an entry for every change applied, none for a
 * change not applied), and after the batch resumes, exactly one entry per change.
 */

const processes = serviceProcessesForFile('crash-history');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Entry {
  action: string;
  batch_id: string | null;
  index: number | null;
  diff: Array<{ path: string; op: string; from?: unknown; to?: unknown }>;
}

async function submit(proc: ServiceProcess, token: string, items: unknown[]): Promise<string> {
  const res = await callService(proc, token, 'POST', '/products/ingestions', { items });
  assert.equal(res.status, 202, JSON.stringify(res.json));
  return (res.json as { batch_id: string }).batch_id;
}

async function waitFor(
  proc: ServiceProcess,
  token: string,
  batchId: string,
  accept: (record: StatusRecord) => boolean,
): Promise<StatusRecord> {
  for (const deadline = Date.now() + 120_000; ; await sleep(10)) {
    const res = await callService<StatusRecord>(proc, token, 'GET', `/products/ingestions/${batchId}`);
    if (accept(res.json)) return res.json;
    if (Date.now() > deadline) throw new Error(`not seen: ${JSON.stringify(res.json)}`);
  }
}

/** Each product's stored price and its history, newest first, over HTTP. */
async function readAll(proc: ServiceProcess, token: string, ids: readonly string[]) {
  const read = [];
  for (const id of ids) {
    const stored = await callService<{ variants: Array<{ price: number }> }>(
      proc,
      token,
      'GET',
      `/products/${id}`,
    );
    const history = await callService<{ data: Entry[]; next_cursor: null }>(
      proc,
      token,
      'GET',
      `/products/${id}/history?limit=500`,
    );
    assert.equal(stored.status, 200);
    assert.equal(history.status, 200);
    assert.equal(history.json.next_cursor, null);
    read.push({ id, price: stored.json.variants[0]!.price, entries: history.json.data });
  }
  return read;
}

const items = (prefix: string, price: number) =>
  Array.from({ length: 1000 }, (_, i) =>
    product({ external_id: `${prefix}-${i}`, variants: [variant({ sku: `${prefix}-${i}`, price })] }),
  );

void describe('history under a crash', { timeout: 300_000 }, () => {
  void test('SIGKILL mid-batch: every applied change has its entry and no entry lacks its change, before and after recovery', async () => {
    const token = await processes.token(`crash-history-${randomUUID()}`);
    const prefix = 'p';
    const first = await processes.start({ WORKER_CHUNK_SIZE: '10' });
    const created = await submit(first, token, items(prefix, 100));
    await waitFor(first, token, created, (r) => TERMINAL.has(r.status));
    const updated = await submit(first, token, items(prefix, 200));
    const seen = await waitFor(
      first,
      token,
      updated,
      (r) => r.status === 'processing' && r.upserted > 0 && r.upserted < 1000,
    );
    first.child.kill('SIGKILL');
    await first.exited;

    // What the crash left, read by an API without a worker: nothing resumes the batch meanwhile.
    const api = await processes.start({ ROLE: 'api' });
    const ids = Array.from({ length: 1000 }, (_, i) => `${prefix}-${i}`);
    const left = await readAll(api, token, ids);
    let applied = 0;
    for (const { id, price, entries } of left) {
      const changed = price === 200;
      if (changed) applied += 1;
      assert.deepEqual(
        entries.map(({ action, batch_id }) => ({ action, batch_id })),
        [
          ...(changed ? [{ action: 'update', batch_id: updated }] : []),
          { action: 'create', batch_id: created },
        ],
        id,
      );
    }
    // Chunks are written in index order, each with its entries: the applied ones are a prefix.
    assert.ok(applied >= seen.upserted && applied < 1000, `applied ${applied}, seen ${seen.upserted}`);
    assert.deepEqual(
      left.map(({ price }) => price),
      ids.map((_, i) => (i < applied ? 200 : 100)),
    );
    assert.equal((await stopProcess(api, 'SIGTERM', 10_000)).code, 0);

    const second = await processes.start({ WORKER_CHUNK_SIZE: '10' });
    const final = await waitFor(second, token, updated, (r) => TERMINAL.has(r.status));
    assert.equal(final.status, 'completed');
    assert.equal(final.upserted, 1000);
    for (const [i, { id, price, entries }] of (await readAll(second, token, ids)).entries()) {
      assert.equal(price, 200, id);
      assert.deepEqual(
        entries.map(({ action, batch_id, index, diff }) => ({ action, batch_id, index, diff })),
        [
          {
            action: 'update',
            batch_id: updated,
            index: i,
            diff: [{ path: 'variants[0].price', op: 'change', sku: id, from: 100, to: 200 }],
          },
          { action: 'create', batch_id: created, index: i, diff: entries[1]!.diff },
        ],
        id,
      );
    }
    assert.equal((await stopProcess(second, 'SIGTERM', 10_000)).code, 0);
  });
});
