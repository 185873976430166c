import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestService } from './test-service.ts';

/** The problem types of CONTRACT §2, with the status and title each one answers with. */
export const PROBLEM_TYPES = {
  'validation-error': { status: 400, title: 'Validation failed' },
  'malformed-json': { status: 400, title: 'Malformed JSON' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not found' },
  'payload-too-large': { status: 413, title: 'Payload too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
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

/** Asserts the response carries an `X-Request-Id` (CONTRACT §2) and returns it. */
export function requestIdOf(res: LightMyRequestResponse): string {
  const id = res.headers['x-request-id'];
  assert.equal(typeof id, 'string', 'every response carries X-Request-Id');
  assert.ok((id as string).length > 0 && (id as string).length <= 128);
  return id as string;
}

/** Text that would betray a stack trace or SQL in a response body. */
const LEAKS = [/\n\s+at\s/, /\bat .+:\d+:\d+/, /node_modules/, /\.ts:\d+/, /\bSELECT\b|\bINSERT\b/];

/**
 * Asserts a problem+json response to the letter (CONTRACT §2): status, content type, exactly the
 * properties type/title/status/detail/instance (+ errors only when expected), the absolute type URI,
 * and, when `errors` is given, exactly those `{field, code}` pairs in that order. Returns the body.
 */
export function assertProblem(
  res: LightMyRequestResponse,
  expected: { slug: ProblemSlug; instance: string; errors?: FieldCode[] | 'any' },
): Record<string, unknown> {
  const { status, title } = PROBLEM_TYPES[expected.slug];
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

/** The nine fields of the status record (spec, CONTRACT §6), in the spec's order. */
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

/** ISO 8601 UTC with milliseconds (CONTRACT §2). */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Asserts a batch status record has exactly the nine fields with their types. */
export function assertStatusRecord(record: Record<string, unknown>): void {
  assert.deepEqual(Object.keys(record).sort(), [...STATUS_FIELDS].sort());
  assert.equal(typeof record.batch_id, 'string');
  for (const counter of ['received_count', 'validated_ok', 'validated_failed', 'upserted', 'failed']) {
    assert.ok(Number.isInteger(record[counter]) && (record[counter] as number) >= 0, `${counter} is a count`);
  }
  assert.match(String(record.created_at), TIMESTAMP);
  assert.match(String(record.updated_at), TIMESTAMP);
  assert.ok(String(record.updated_at) >= String(record.created_at), 'updated_at is not before created_at');
}

/** The counters of a status record, in the order received/ok/failed-validation/upserted/failed. */
export function countersOf(record: Record<string, unknown>): number[] {
  return [
    record.received_count,
    record.validated_ok,
    record.validated_failed,
    record.upserted,
    record.failed,
  ] as number[];
}

/** Every stored product of a token's tenant, walking `GET /products` with its cursors. */
export async function allProducts(svc: TestService, token: string): Promise<Array<Record<string, unknown>>> {
  const products: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  do {
    const query: string = `limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await svc.request({ method: 'GET', url: `/products?${query}`, token });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
    products.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return products;
}

/** Submits items and waits for the batch to end; returns its id, final record and error records. */
export async function ingest(
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
