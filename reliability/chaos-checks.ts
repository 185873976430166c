import assert from 'node:assert/strict';
import { createItemValidator } from '../src/validation/item-validator.ts';
import { countersOf, TERMINAL, type StatusRecord } from '../test/helpers/assertions.ts';
import { createCatalogModel, type BatchPrediction, type ModelProduct } from './catalog-model.ts';
import { replayHistory, type HistoryEntry } from './history-replay.ts';
import type { ChaosClient } from './chaos-client.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Named checks, each passed or failed with why; the run's verdict is their tally. */
export interface Verdicts {
  passed: number;
  failures: string[];
  /** Runs `body` as one check named `name`; a throw (an assertion) fails it. */
  check(name: string, body: () => void | Promise<void>): Promise<void>;
}

/** An empty tally that prints each failure as it happens. */
export function createVerdicts(say: (line: string) => void): Verdicts {
  const verdicts: Verdicts = {
    passed: 0,
    failures: [],
    async check(name, body) {
      try {
        await body();
        verdicts.passed++;
      } catch (error) {
        const message = `${name}: ${(error as Error).message.split('\n').slice(0, 6).join(' | ')}`;
        verdicts.failures.push(message);
        say(`  FAILED ${message}`);
      }
    },
  };
  return verdicts;
}

/** One logical submission of a tenant: its items and what the client learned of it. */
export interface TenantSubmission {
  items: unknown[];
  batchId: string;
  /** Attempts whose answer was lost (5xx or none) before the 202. */
  lost: number;
  /** Every attempt carried one `Idempotency-Key`: a lost attempt then created no batch of its own. */
  keyed?: boolean;
  /** The 202 was a replay of an attempt whose answer was lost. */
  replayed?: boolean;
}

/** How many batches of its own a submission's lost attempts may have created. */
const spareOf = (submission: TenantSubmission | undefined) =>
  submission === undefined || submission.keyed ? 0 : submission.lost;

/** A tenant of the run: its token and its submissions in the order it made them. */
export interface ChaosTenant {
  name: string;
  token: string;
  submissions: TenantSubmission[];
}

interface ListedBatch {
  batch_id: string;
  received_count: number;
}

/** Every batch of a tenant, oldest first, walking the list's cursors. */
async function listBatches(client: ChaosClient, token: string): Promise<ListedBatch[]> {
  const batches: ListedBatch[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await client.get(token, `/products/ingestions?limit=100${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.json));
    const body = page.json as { data: ListedBatch[]; next_cursor: string | null };
    batches.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return batches.reverse();
}

/**
 * The batches that exist, oldest first, each with the items it was made from. A submission without
 * an `Idempotency-Key` whose answer was lost may have created a batch (or several, one per lost
 * attempt) just before the one that got the 202: a tenant submits one batch at a time, so those sit
 * between its known batches, with the same items. A keyed submission made exactly one batch,
 * whatever was lost. Anything else in the list is a batch nobody submitted.
 */
export function matchBatches(
  submissions: readonly TenantSubmission[],
  listed: readonly ListedBatch[],
): Array<{ batchId: string; items: unknown[]; known: boolean }> {
  const matched: Array<{ batchId: string; items: unknown[]; known: boolean }> = [];
  let next = 0;
  let spare = spareOf(submissions[0]);
  for (const batch of listed) {
    const submission = submissions[next];
    assert.ok(submission, `batch ${batch.batch_id} after the last submission`);
    if (batch.batch_id === submission.batchId) {
      matched.push({ batchId: batch.batch_id, items: submission.items, known: true });
      next++;
      spare = spareOf(submissions[next]);
    } else {
      assert.ok(spare > 0, `batch ${batch.batch_id} matches no submission (expected ${submission.batchId})`);
      assert.equal(batch.received_count, submission.items.length, `lost batch ${batch.batch_id}'s size`);
      matched.push({ batchId: batch.batch_id, items: submission.items, known: false });
      spare--;
    }
  }
  assert.equal(next, submissions.length, `accepted batches missing from the list`);
  return matched;
}

/** Waits until every batch of `ids` is terminal, or `deadline`; returns the terminal records. */
export async function waitTerminal(
  client: ChaosClient,
  token: string,
  ids: readonly string[],
  deadline: number,
): Promise<{ terminal: Map<string, StatusRecord>; unfinished: StatusRecord[] }> {
  const terminal = new Map<string, StatusRecord>();
  const unfinished: StatusRecord[] = [];
  for (const id of ids) {
    for (;;) {
      const answer = await client.get(token, `/products/ingestions/${id}`, deadline + 30_000);
      assert.equal(answer.status, 200, `${id}: ${JSON.stringify(answer.json)}`);
      const record = answer.json as StatusRecord;
      if (TERMINAL.has(record.status)) {
        terminal.set(id, record);
        break;
      }
      if (Date.now() > deadline) {
        unfinished.push(record);
        break;
      }
      await sleep(500);
    }
  }
  return { terminal, unfinished };
}

/** Every error record of a batch, walking the cursors with pages of `limit`. */
async function walkErrors(client: ChaosClient, token: string, id: string, limit: number) {
  const records: Array<{ index: number; external_id: string | null; sku: string | null; errors: unknown[] }> =
    [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await client.get(token, `/products/ingestions/${id}/errors?limit=${limit}${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.json));
    const body = page.json as { data: typeof records; next_cursor: string | null };
    assert.ok(body.data.length <= limit, `page of ${body.data.length} for limit ${limit}`);
    records.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return records.map(({ index, external_id, sku, errors }) => ({
    index,
    external_id,
    sku,
    errors: (errors as Array<{ field: string; code: string }>).map(({ field, code }) => ({ field, code })),
  }));
}

/** Every product of a tenant, walking the list, without timestamps. */
async function listProducts(client: ChaosClient, token: string): Promise<unknown[]> {
  const products: unknown[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await client.get(token, `/products?limit=50${query}`);
    assert.equal(page.status, 200, JSON.stringify(page.json));
    const body = page.json as { data: Array<Record<string, unknown>>; next_cursor: string | null };
    products.push(...body.data.map(({ created_at: _c, updated_at: _u, ...rest }) => rest));
    cursor = body.next_cursor;
  } while (cursor);
  return products;
}

/** Every history entry of a product, newest first, walking the cursors. */
async function walkHistory(client: ChaosClient, token: string, externalId: string): Promise<HistoryEntry[]> {
  const entries: HistoryEntry[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await client.get(
      token,
      `/products/${encodeURIComponent(externalId)}/history?limit=500${query}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.json));
    const body = page.json as { data: HistoryEntry[]; next_cursor: string | null };
    entries.push(...body.data);
    cursor = body.next_cursor;
  } while (cursor);
  return entries;
}

/** Products whose history is replayed per tenant: enough to meet every fault, few enough to stay quick. */
const HISTORY_SAMPLE = 200;

/**
 * CONTRACT §11.3 after the faults: each product's history, replayed from its first entry, chains
 * (every `from` is what the entry before left) and ends with the stored product. A change a crash
 * applied without its entry, or an entry recorded without its change, breaks the chain.
 */
async function checkHistories(client: ChaosClient, token: string, products: readonly ModelProduct[]) {
  for (const product of products.slice(0, HISTORY_SAMPLE)) {
    const replayed = replayHistory(await walkHistory(client, token, product.external_id));
    assert.deepEqual(replayed, product, `the history of ${product.external_id}`);
  }
}

/** Page sizes the errors pages are walked with: every batch with two, every fifth with one more. */
const PAGE_SIZES = [500, 3];

/**
 * The end-of-run checks of one tenant against the model of CONTRACT §5: the batches that exist are
 * exactly the accepted ones (plus any a lost answer of an unkeyed one created), each terminal with the counters and
 * error records the model predicts, and the catalog equal to the model's.
 */
export async function checkTenant(
  client: ChaosClient,
  tenant: ChaosTenant,
  verdicts: Verdicts,
  deadline: number,
): Promise<{ batches: number; failedItems: number }> {
  const validate = createItemValidator();
  const model = createCatalogModel(validate);
  const known = tenant.submissions.map((s) => s.batchId);
  let records = new Map<string, StatusRecord>();
  await verdicts.check(`${tenant.name}: every accepted batch (${known.length}) terminal`, async () => {
    const { terminal, unfinished } = await waitTerminal(client, tenant.token, known, deadline);
    records = terminal;
    assert.deepEqual(unfinished.slice(0, 2), [], `${unfinished.length} not terminal`);
  });
  let batches: ReturnType<typeof matchBatches> = [];
  await verdicts.check(`${tenant.name}: the batch list holds exactly the submitted batches`, async () => {
    batches = matchBatches(tenant.submissions, await listBatches(client, tenant.token));
  });
  const extra = batches.filter((b) => !b.known).map((b) => b.batchId);
  if (extra.length > 0) {
    const { terminal } = await waitTerminal(client, tenant.token, extra, deadline);
    for (const [id, record] of terminal) records.set(id, record);
  }
  let failedItems = 0;
  for (const [position, batch] of batches.entries()) {
    const prediction: BatchPrediction = model.applyBatch(batch.items);
    failedItems += prediction.failed;
    const record = records.get(batch.batchId);
    // Not terminal: already failed above; its pages would never end (their cursor stays a string).
    if (!record) continue;
    await verdicts.check(`${tenant.name}: batch ${position} (${batch.batchId}) counters`, () => {
      assert.deepEqual(countersOf(record), prediction.counters);
    });
    const sizes = position % 5 === 0 ? [...PAGE_SIZES, 1] : PAGE_SIZES;
    await verdicts.check(
      `${tenant.name}: batch ${position} error pages (limits ${sizes.join(', ')})`,
      async () => {
        for (const limit of sizes) {
          assert.deepEqual(await walkErrors(client, tenant.token, batch.batchId, limit), prediction.failures);
        }
      },
    );
  }
  await verdicts.check(`${tenant.name}: every product equals the model`, async () => {
    assert.deepEqual(await listProducts(client, tenant.token), model.products());
    for (const product of model.products().slice(0, 3)) {
      const one = await client.get(tenant.token, `/products/${encodeURIComponent(product.external_id)}`);
      const { created_at: _c, updated_at: _u, ...rest } = one.json as Record<string, unknown>;
      assert.deepEqual({ status: one.status, product: rest }, { status: 200, product });
    }
  });
  await verdicts.check(`${tenant.name}: each product's history replays to the product`, () =>
    checkHistories(client, tenant.token, model.products()),
  );
  return { batches: batches.length, failedItems };
}
