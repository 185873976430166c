/** The float16 packing of the classifier head's vectors. */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeFloat16, encodeFloat16, FLOAT16_MAX } from '../../src/analysis/model/float16-codec.ts';

const roundTrip = (values: number[]): number[] => Array.from(decodeFloat16(encodeFloat16(values)));

void test('float16 keeps representable numbers exactly, the smallest subnormal and the largest finite one', () => {
  const exact = [0, 1, -2.5, 0.1015625, 1024, 2 ** -14, 2 ** -24, FLOAT16_MAX, -FLOAT16_MAX];
  assert.deepEqual(roundTrip(exact), exact);
});

void test('float16 rounds to the nearest of its numbers and flushes what is too small to zero', () => {
  assert.deepEqual(roundTrip([1.0004, 1.0006, 0.1, 2 ** -26]), [1, 1 + 2 ** -10, 0.0999755859375, 0]);
});

void test('float16 stores overflow as infinity of its sign and NaN as NaN', () => {
  assert.deepEqual(roundTrip([65520, -1e6, Infinity]), [Infinity, -Infinity, Infinity]);
  assert.ok(Number.isNaN(roundTrip([Number.NaN])[0]));
});
