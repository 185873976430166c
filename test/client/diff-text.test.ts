import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffText } from '../../src/client/diff-text.ts';

/** The one text of a diff element the dry-run file and the dashboard show (docs/reference.md §11.2). */

void test('a change reads from → to in JSON, an add reads added (a created product as product), a remove names its sku', () => {
  assert.equal(
    diffText({ path: 'variants[0].price', op: 'change', sku: 's', from: 265, to: 250 }),
    'variants[0].price: 265 → 250',
  );
  assert.equal(diffText({ path: 'name', op: 'change', from: 'Lamp', to: '' }), 'name: "Lamp" → ""');
  assert.equal(
    diffText({ path: 'variants[0].images[0].angle', op: 'change', from: 90, to: null }),
    'variants[0].images[0].angle: 90 → null',
  );
  assert.equal(diffText({ path: 'variants[1]', op: 'add', sku: 's', to: {} }), 'variants[1]: added');
  assert.equal(diffText({ path: '', op: 'add', to: {} }), 'product: added');
  assert.equal(
    diffText({ path: 'variants', op: 'remove', sku: 'lamp-black', from: {} }),
    'variants: removed lamp-black',
  );
});
