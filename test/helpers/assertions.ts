import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestService } from './test-service.ts';

/** What the tests assert about answers and stored state, and the API walks they assert on. */

/**
 * The problem types of docs/reference.md §2, §10 and §11, with the status and title each one answers with. Written
 * out here rather than imported from `src/errors/app-errors.ts` on purpose: the tests hold the
 * contract's table, so a changed title or status in the service fails them.
 */
export const PROBLEM_TYPES = {
  'validation-error': { status: 400, title: 'Validation failed' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'not-acceptable': { status: 406, title: 'Not acceptable' },
  conflict: { status: 409, title: 'Conflict' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'idempotency-key-mismatch': { status: 422, title: 'Idempotency key reused with another body' },
  'rate-limited': { status: 429, title: 'Too many requests' },
  'internal-error': { status: 500, title: 'Internal server error' },
} as const;

export type ProblemSlug = keyof typeof PROBLEM_TYPES;

/** `PUBLIC_BASE_URL` of every test service (see startTestService). */
export const PUBLIC_BASE_URL = 'http://service.test';

/** A field error reduced to what the contract fixes: where and why. */
export interface FieldCode {
  field: string;
  code: string;
}

/** Reduces `errors[]` entries to `{field, code}`, checking each also has a non-empty message. */
export function fieldCodes(errors: unknown): FieldCode[] {
  assert.ok(Array.isArray(errors), `errors must be an array, got ${JSON.stringify(errors)}`);
  return errors.map((entry: Record<string, unknown>) => {
    assert.deepEqual(Object.keys(entry).sort(), ['code', 'field', 'message'], JSON.stringify(entry));
    assert.equal(typeof entry.message, 'string');
    assert.ok((entry.message as string).length > 0, 'an error message is never empty');
    return { field: entry.field as string, code: entry.code as string };
  });
}

/** Sorts `{field, code}` pairs, for comparisons where the contract fixes no order. */
export function sortedFieldCodes(list: FieldCode[]): FieldCode[] {
  return [...list].sort((a, b) => `${a.field}\u0000${a.code}`.localeCompare(`${b.field}\u0000${b.code}`));
}

/** Asserts the response carries an `X-Request-Id` (docs/reference.md §2) and returns it. */
export function requestIdOf(res: LightMyRequestResponse): string {
  const id = res.headers['x-request-id'];
  assert.equal(typeof id, 'string', 'every response carries X-Request-Id');
  assert.ok((id as string).length > 0 && (id as string).length <= 128);
  return id as string;
}

/** Text that would betray a stack trace or SQL in a response body. */
const LEAKS = [/\n\s+at\s/, /\bat .+:\d+:\d+/, /node_modules/, /\.ts:\d+/, /\bSELECT\b|\bINSERT\b/];

/**
 * Asserts a problem+json response to the letter (docs/reference.md §2): status, content type, exactly the
 * properties type/title/status/detail/instance (+ errors only when expected), the absolute type URI,
 * and, when `errors` is given, exactly those `{field, code}` pairs in that order. Returns the body.
 */
export function assertProblem(
  res: LightMyRequestResponse,
  expected: { slug: ProblemSlug; instance: string; errors?: FieldCode[] | 'any'; status?: number },
): Record<string, unknown> {
  const { title } = PROBLEM_TYPES[expected.slug];
  // A problem may answer with HTTP's closer status than its slug's own (a 422 validation-error).
  const status = expected.status ?? PROBLEM_TYPES[expected.slug].status;
  assert.equal(
    res.statusCode,
    status,
    `expected ${status} ${expected.slug}, got ${res.statusCode}: ${res.body}`,
  );
  assert.match(String(res.headers['content-type']), /^application\/problem\+json(;|$)/);
  requestIdOf(res);
  for (const leak of LEAKS) assert.doesNotMatch(res.body, leak, 'no stack trace or SQL reaches a client');
  const body = res.json<Record<string, unknown>>();
  const keys = ['detail', 'instance', 'status', 'title', 'type'];
  if (expected.errors !== undefined) keys.push('errors');
  assert.deepEqual(Object.keys(body).sort(), keys.sort(), `problem properties of ${res.body}`);
  assert.equal(body.type, `${PUBLIC_BASE_URL}/problems/${expected.slug}`);
  assert.equal(body.title, title);
  assert.equal(body.status, status);
  assert.equal(typeof body.detail, 'string');
  assert.ok((body.detail as string).length > 0, 'detail is present');
  assert.equal(body.instance, expected.instance);
  if (expected.errors !== undefined) {
    const codes = fieldCodes(body.errors);
    if (expected.errors === 'any') assert.ok(codes.length > 0);
    else assert.deepEqual(codes, expected.errors);
  }
  return body;
}

/** Asserts that a tenant has stored nothing: no batch and no product. */
export async function assertNothingStored(svc: TestService, token: string): Promise<void> {
  const batches = await svc.request({ method: 'GET', url: '/products/ingestions', token });
  assert.equal(batches.statusCode, 200, batches.body);
  assert.deepEqual(batches.json(), { data: [], next_cursor: null });
  const products = await svc.request({ method: 'GET', url: '/products', token });
  assert.equal(products.statusCode, 200, products.body);
  assert.deepEqual(products.json(), { data: [], next_cursor: null });
}

/** ISO 8601, UTC, milliseconds: the only timestamp format the API shows. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The nine fields of the spec's batch status record (docs/reference.md §6: all of them, always), in the spec's order. */
export const STATUS_FIELDS = [
  'batch_id',
  'status',
  'received_count',
  'created_at',
  'validated_ok',
  'validated_failed',
  'upserted',
  'failed',
  'updated_at',
] as const;

/** The batch states in the only order they can happen (docs/reference.md §5). */
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

/**
 * Asserts a status record's status and its five counters, given in the order of {@link counterValues}
 * (received, validated ok, validated failed, upserted, failed), as one exact comparison.
 */
export function assertCounters(
  record: StatusRecord,
  status: string,
  [received_count, validated_ok, validated_failed, upserted, failed]: number[],
): void {
  const expected = { status, received_count, validated_ok, validated_failed, upserted, failed };
  assert.deepEqual(countersOf(record), expected);
}

/** {@link assertCounters} on the batch's status as the API answers it now. */
export async function assertBatchCounters(
  svc: TestService,
  token: string,
  batchId: string,
  status: string,
  counters: number[],
): Promise<void> {
  assertCounters(await batchStatus(svc, token, batchId), status, counters);
}

/** The five counters alone, as a list (received, validated ok, validated failed, upserted, failed). */
export const counterValues = (record: Record<string, unknown>): number[] => {
  const { status: _status, ...counters } = countersOf(record as unknown as StatusRecord);
  return Object.values(counters);
};

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

/** `POST /products/ingestions/preview` of `items`, asserted 200; its answer as `T`. */
export async function previewItems<T>(svc: TestService, token: string, items: unknown[]): Promise<T> {
  const res = await svc.request({
    method: 'POST',
    url: '/products/ingestions/preview',
    token,
    json: { items },
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<T>();
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
 * Asserts the invariants of docs/reference.md §5/§6 on one status record: the nine fields, ISO ms UTC
 * timestamps, and counters that never exceed what was received; at a terminal state, the equalities.
 */
export function assertRecordInvariants(record: StatusRecord, receivedCount: number): void {
  assert.deepEqual(Object.keys(record).sort(), [...STATUS_FIELDS].sort());
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
    // `failed` also names a batch given up after retries, whatever it upserted before (docs/reference.md §5).
    const allowed =
      failed === 0 ? ['completed'] : upserted === 0 ? ['failed'] : ['completed_with_errors', 'failed'];
    assert.ok(allowed.includes(record.status), `terminal status does not match counters: ${where}`);
  }
}

/**
 * Asserts that `next` may follow `previous` (docs/reference.md §5/§6): states only move forward, counters
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

/** Asserts a batch status record has exactly the nine fields with their types. */
export function assertStatusRecord(record: Record<string, unknown>): void {
  assert.deepEqual(Object.keys(record).sort(), [...STATUS_FIELDS].sort());
  assert.equal(typeof record.batch_id, 'string');
  for (const counter of ['received_count', 'validated_ok', 'validated_failed', 'upserted', 'failed']) {
    assert.ok(Number.isInteger(record[counter]) && (record[counter] as number) >= 0, `${counter} is a count`);
  }
  assert.match(String(record.created_at), ISO_MS);
  assert.match(String(record.updated_at), ISO_MS);
  assert.ok(String(record.updated_at) >= String(record.created_at), 'updated_at is not before created_at');
}

/** Submits items and waits for the batch to end; returns its id, final record and error records. */
export async function ingestAndRead(
  svc: TestService,
  token: string,
  items: unknown[],
): Promise<{
  batchId: string;
  final: Record<string, unknown>;
  errors: Array<Record<string, unknown>>;
}> {
  const batchId = await svc.submit(token, items);
  const final = await svc.waitForTerminal(token, batchId);
  const errors = await svc.allErrors(token, batchId);
  return { batchId, final, errors };
}
