import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createItemValidator, isAbsoluteUrlWithHost } from '../../src/ingestion/item-validator.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';

test('URL checks are linear: a 65,000-character URL ending in a space is judged at once', () => {
  const validate = createItemValidator();
  const url = `https://${'a'.repeat(65_000)} `;
  const started = performance.now();
  const verdict = validate(product({ variants: [variant({ item_url: url })] }));
  const elapsed = performance.now() - started;
  assert.equal(verdict.ok, false);
  assert.deepEqual(verdict.ok ? [] : verdict.errors.map((e) => `${e.code}@${e.field}`), [
    'invalid_format@variants[0].item_url',
  ]);
  // Not a benchmark: a backtracking pattern took seconds here; anything under a second is linear.
  assert.ok(elapsed < 1000, `took ${elapsed.toFixed(0)} ms`);
});

test('isAbsoluteUrlWithHost accepts absolute URLs with a host and refuses the rest', () => {
  const accepted = ['https://x.com', 'https://x.com/a?b=1#c', 'ftp://host/file', 'https://[::1]:8443/p'];
  const refused = [
    'https://',
    'https:foo',
    '//x.com/a',
    'not a url',
    'https://x.com/a b',
    '',
    'https:///path',
  ];
  assert.deepEqual(accepted.map(isAbsoluteUrlWithHost), [true, true, true, true]);
  assert.deepEqual(refused.map(isAbsoluteUrlWithHost), [false, false, false, false, false, false, false]);
});
