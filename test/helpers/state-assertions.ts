import assert from 'node:assert/strict';
import type { TestService } from './test-service.ts';

/** ISO 8601, UTC, milliseconds: the only timestamp format the API shows. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The nine fields of the spec's batch status record (CONTRACT §6: all of them, always). */
export const STATUS_FIELDS = [
  'batch_id',
  'created_at',
  'failed',
  'received_count',
  'status',
  'updated_at',
  'upserted',
  'validated_failed',
  'validated_ok',
] as const;

/** The batch states in the only order they can happen (CONTRACT §5). */
export const STATUS_ORDER: Record<string, number> = {
  accepted: 0,
  validating: 1,
  processing: 2,
  completed: 3,
  completed_with_errors: 3,
  failed: 3,
};

export const TERMINAL = new Set(['completed', 'completed_with_errors', 'failed']);

/** A batch status record as the API returns it. */
export interface StatusRecord {
  batch_id: string;
  status: string;
  received_count: number;
  created_at: string;
  validated_ok: number;
  validated_failed: number;
  upserted: number;
  failed: number;
  updated_at: string;
}

/** The counters of a status record, in a fixed order, for one exact assertion. */
export const countersOf = (record: StatusRecord) => ({
  status: record.status,
  received_count: record.received_count,
  validated_ok: record.validated_ok,
  validated_failed: record.validated_failed,
  upserted: record.upserted,
  failed: record.failed,
});

/** A stored image as the catalog shows it. */
export interface ImageView {
  url: string;
  angle: number | null;
}

/** What GET /products/{external_id} must answer for an item stored exactly as sent (no timestamps). */
export function viewOf(item: Record<string, unknown>): Record<string, unknown> {
  const variants = item.variants as Array<Record<string, unknown>>;
  return {
    ...item,
    variants: variants.map((variant) => ({
      ...variant,
      images: ((variant.images as Array<Record<string, unknown>> | undefined) ?? []).map((image) => ({
        url: image.url,
        angle: image.angle ?? null,
      })),
    })),
  };
}

/** A product view without its timestamps, after checking their format and order. */
export function withoutTimestamps(view: Record<string, unknown>): Record<string, unknown> {
  const { created_at, updated_at, ...rest } = view;
  assert.match(String(created_at), ISO_MS);
  assert.match(String(updated_at), ISO_MS);
  assert.ok(
    String(created_at) <= String(updated_at),
    `created_at ${String(created_at)} after updated_at ${String(updated_at)}`,
  );
  return rest;
}

/** GET /products/{external_id}, encoded; returns the status code and the parsed body. */
export async function getProduct(
  svc: TestService,
  token: string,
  externalId: string,
): Promise<{ statusCode: number; body: Record<string, unknown> }> {
  const res = await svc.request({
    method: 'GET',
    url: `/products/${encodeURIComponent(externalId)}`,
    token,
  });
  return { statusCode: res.statusCode, body: res.json<Record<string, unknown>>() };
}

/** GET /products/{external_id} that must exist: the product view. */
export async function storedProduct(
  svc: TestService,
  token: string,
  externalId: string,
): Promise<Record<string, unknown>> {
  const { statusCode, body } = await getProduct(svc, token, externalId);
  assert.equal(statusCode, 200, `GET /products/${externalId}: ${JSON.stringify(body)}`);
  return body;
}

/** The status record of a batch through the API. */
export async function batchStatus(svc: TestService, token: string, batchId: string): Promise<StatusRecord> {
  const res = await svc.request({ method: 'GET', url: `/products/ingestions/${batchId}`, token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<StatusRecord>();
}

/** Polls a batch until it is terminal; returns its final status record. */
export async function waitTerminal(
  svc: TestService,
  token: string,
  batchId: string,
  timeoutMs = 30_000,
): Promise<StatusRecord> {
  return (await svc.waitForTerminal(token, batchId, timeoutMs)) as unknown as StatusRecord;
}

/** Submits `items` and waits until the batch is terminal; returns the final status record. */
export async function ingest(
  svc: TestService,
  token: string,
  items: unknown[],
  timeoutMs = 30_000,
): Promise<StatusRecord> {
  const batchId = await svc.submit(token, items);
  return await waitTerminal(svc, token, batchId, timeoutMs);
}

/** Every product of the tenant, walking `GET /products` cursors with page size `limit`. */
export async function allProducts(
  svc: TestService,
  token: string,
  limit = 100,
): Promise<Array<Record<string, unknown>>> {
  const products: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await svc.request({ method: 'GET', url: `/products?${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
    products.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return products;
}

/**
 * Asserts the invariants of CONTRACT §5/§6 on one status record: the nine fields, ISO ms UTC
 * timestamps, and counters that never exceed what was received; at a terminal state, the equalities.
 */
export function assertRecordInvariants(record: StatusRecord, receivedCount: number): void {
  assert.deepEqual(Object.keys(record).sort(), [...STATUS_FIELDS]);
  assert.match(record.created_at, ISO_MS);
  assert.match(record.updated_at, ISO_MS);
  assert.ok(record.status in STATUS_ORDER, `unknown status ${record.status}`);
  assert.equal(record.received_count, receivedCount);
  for (const counter of ['validated_ok', 'validated_failed', 'upserted', 'failed'] as const) {
    assert.ok(Number.isInteger(record[counter]) && record[counter] >= 0, `${counter} = ${record[counter]}`);
  }
  const { validated_ok: ok, validated_failed: bad, upserted, failed } = record;
  const where = JSON.stringify(record);
  assert.ok(ok + bad <= receivedCount, `validated_ok + validated_failed > received_count: ${where}`);
  assert.ok(upserted + failed <= receivedCount, `upserted + failed > received_count: ${where}`);
  assert.ok(upserted <= ok, `upserted > validated_ok: ${where}`);
  assert.ok(bad <= failed, `validated_failed > failed: ${where}`);
  assert.ok(record.updated_at >= record.created_at, `updated_at before created_at: ${where}`);
  if (TERMINAL.has(record.status)) {
    assert.equal(ok + bad, receivedCount, `terminal but not all validated: ${where}`);
    assert.equal(upserted + failed, receivedCount, `terminal but not all settled: ${where}`);
    // `failed` also names a batch given up after retries, whatever it upserted before (CONTRACT §5).
    const allowed =
      failed === 0 ? ['completed'] : upserted === 0 ? ['failed'] : ['completed_with_errors', 'failed'];
    assert.ok(allowed.includes(record.status), `terminal status does not match counters: ${where}`);
  }
}

/**
 * Asserts that `next` may follow `previous` (CONTRACT §5/§6): states only move forward, counters
 * never decrease, created_at is constant, updated_at never goes back and moves whenever the
 * state or a counter did.
 */
export function assertProgression(previous: StatusRecord, next: StatusRecord): void {
  const where = `${JSON.stringify(previous)} -> ${JSON.stringify(next)}`;
  assert.equal(next.batch_id, previous.batch_id);
  assert.equal(next.created_at, previous.created_at, `created_at changed: ${where}`);
  assert.ok(STATUS_ORDER[next.status]! >= STATUS_ORDER[previous.status]!, `status went back: ${where}`);
  if (TERMINAL.has(previous.status)) assert.equal(next.status, previous.status, `left terminal: ${where}`);
  for (const counter of ['validated_ok', 'validated_failed', 'upserted', 'failed'] as const) {
    assert.ok(next[counter] >= previous[counter], `${counter} decreased: ${where}`);
  }
  assert.ok(next.updated_at >= previous.updated_at, `updated_at went back: ${where}`);
  const changed =
    next.status !== previous.status ||
    (['validated_ok', 'validated_failed', 'upserted', 'failed'] as const).some(
      (counter) => next[counter] !== previous[counter],
    );
  if (changed) assert.ok(next.updated_at > previous.updated_at, `changed without new updated_at: ${where}`);
}
