import assert from 'node:assert/strict';
import type { ModelProduct, ModelVariant } from './catalog-model.ts';

/**
 * Replays a product's history (CONTRACT §11.3) from its oldest entry, written independently of the
 * service's diff: each `create` starts from its `add` at path "", each element of an update is
 * applied by its `sku` and `url`, a `delete` ends the product. Every `change` must find its `from`
 * where it applies, every `add` must find nothing there yet, every `remove` the variant it names:
 * an entry recorded without its change, or a change applied without its entry, breaks the chain
 * (or leaves a product other than the stored one). Returns the product the history ends with.
 */

interface Element {
  path: string;
  op: 'add' | 'change' | 'remove';
  sku?: string;
  url?: string;
  from?: unknown;
  to?: unknown;
}

/** A history entry as the route sends it. */
export interface HistoryEntry {
  action: 'create' | 'update' | 'delete';
  batch_id: string | null;
  index: number | null;
  diff: Element[];
}

/** The field an element's path names, the last segment after a `.` (`variants[0].price` → `price`). */
const fieldOf = (path: string) => path.slice(path.lastIndexOf('.') + 1);

function applyElement(product: ModelProduct, element: Element, where: string): void {
  const fields = product as unknown as Record<string, unknown>;
  if (element.sku === undefined) {
    assert.equal(element.op, 'change', `${where}: a product element is a change`);
    assert.deepEqual(fields[element.path], element.from, `${where}: from of ${element.path}`);
    fields[element.path] = element.to;
    return;
  }
  const variant = product.variants.find((v) => v.sku === element.sku);
  if (element.op === 'remove') {
    assert.deepEqual(variant, element.from, `${where}: the removed variant ${element.sku}`);
    product.variants = product.variants.filter((v) => v.sku !== element.sku);
    return;
  }
  if (element.url === undefined) {
    if (element.op === 'add') {
      assert.equal(variant, undefined, `${where}: variant ${element.sku} added twice`);
      product.variants.push(element.to as ModelVariant);
      return;
    }
    assert.ok(variant, `${where}: a change of a variant ${element.sku} not there`);
    const field = fieldOf(element.path);
    const values = variant as unknown as Record<string, unknown>;
    assert.deepEqual(values[field], element.from, `${where}: from of ${element.path}`);
    values[field] = element.to;
    return;
  }
  assert.ok(variant, `${where}: an image of a variant ${element.sku} not there`);
  const image = variant.images.find((i) => i.url === element.url);
  if (element.op === 'add') {
    assert.equal(image, undefined, `${where}: image ${element.url} added twice`);
    variant.images.push(element.to as ModelVariant['images'][number]);
    return;
  }
  assert.ok(image, `${where}: an angle of an image ${element.url} not there`);
  assert.deepEqual(image.angle, element.from, `${where}: from of ${element.path}`);
  image.angle = element.to as number | null;
}

/** The product `entries` (newest first, as the route pages them) end with; null when they end deleted. */
export function replayHistory(entries: readonly HistoryEntry[]): ModelProduct | null {
  let product: ModelProduct | null = null;
  for (const [n, entry] of [...entries].reverse().entries()) {
    const where = `entry ${n} (${entry.action}, batch ${entry.batch_id}, index ${entry.index})`;
    if (entry.action === 'create') {
      assert.equal(product, null, `${where}: a create of a product that exists`);
      assert.equal(entry.diff.length, 1, `${where}: one add`);
      assert.equal(entry.diff[0]?.path, '', `${where}: at path ""`);
      product = structuredClone(entry.diff[0].to) as ModelProduct;
    } else if (entry.action === 'delete') {
      assert.ok(product, `${where}: a delete of a product that does not exist`);
      assert.deepEqual(entry.diff, [], `${where}: an empty diff`);
      product = null;
    } else {
      assert.ok(product, `${where}: an update of a product that does not exist`);
      assert.ok(entry.diff.length > 0, `${where}: an update that changes nothing`);
      for (const element of entry.diff) applyElement(product, element, where);
    }
  }
  return product;
}
