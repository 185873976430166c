/** withRequestId: what the OpenAPI document adds to every route's schema, without losing the route's own. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from '@sinclair/typebox';

import { withRequestId } from '../../src/http/schemas.ts';

const requestId = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[A-Za-z0-9._~:@+=-]+$',
  description: 'Echoed in the response’s X-Request-Id; any other value is replaced by a new id',
};

void test('a route without header schemas documents only the optional X-Request-Id', () => {
  const documented = withRequestId({ response: { 200: Type.Object({}) } });
  assert.deepEqual(JSON.parse(JSON.stringify(documented.headers)), {
    type: 'object',
    properties: { 'X-Request-Id': requestId },
  });
});

void test("a route's own header schema keeps what it requires and what it leaves optional", () => {
  // Plain JSON Schema: its `required` is its own, not rebuilt from TypeBox's Optional marks.
  const headers = {
    type: 'object',
    properties: { 'Idempotency-Key': { type: 'string' }, 'X-Trace': { type: 'string' } },
    required: ['Idempotency-Key'],
  };
  const documented = withRequestId({ headers });
  assert.deepEqual(JSON.parse(JSON.stringify(documented.headers)), {
    type: 'object',
    properties: {
      'Idempotency-Key': { type: 'string' },
      'X-Trace': { type: 'string' },
      'X-Request-Id': requestId,
    },
    required: ['Idempotency-Key'],
  });
  // The route validates with its own schema object, which the document's copy leaves untouched.
  assert.deepEqual(Object.keys(headers.properties), ['Idempotency-Key', 'X-Trace']);
});

void test('every response, documented or default, gains the X-Request-Id header', () => {
  const documented = withRequestId({
    response: { 200: Type.Object({}), default: { headers: { 'Retry-After': Type.Integer() } } },
  }) as { response: Record<string, { headers: Record<string, unknown> }> };
  assert.deepEqual(Object.keys(documented.response['200']!.headers), ['X-Request-Id']);
  assert.deepEqual(Object.keys(documented.response.default!.headers), ['Retry-After', 'X-Request-Id']);
});
