import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchesOf, envelope } from '../../src/import-pipeline/batches.ts';
import { describePositions } from '../../src/client/position-ranges.ts';

void describe('batching', () => {
  async function* itemsOf(texts: string[]) {
    for (const [position, text] of texts.entries()) yield { position: position * 2, text };
  }
  const collect = async (texts: string[], size: number, maxBytes?: number) => {
    const out = [];
    for await (const batch of batchesOf(itemsOf(texts), { size, maxBytes })) out.push(batch);
    return out;
  };

  void test('cuts at the size and keeps the items’ text and positions', async () => {
    const batches = await collect(['1', '{"a":1.10}', '"x"'], 2);
    assert.deepEqual(batches, [
      { seq: 1, positions: [0, 2], texts: ['1', '{"a":1.10}'] },
      { seq: 2, positions: [4], texts: ['"x"'] },
    ]);
    assert.equal(envelope(batches[0]!.texts), '{"items":[1,{"a":1.10}]}');
    assert.deepEqual(await collect([], 2), []);
  });

  void test('cuts early at the byte limit; an item over it goes alone', async () => {
    const batches = await collect(['"aaaa"', '"bb"', '"cccccccccc"', '1'], 10, 12);
    assert.deepEqual(
      batches.map((b) => envelope(b.texts)),
      ['{"items":["aaaa","bb"]}', '{"items":["cccccccccc"]}', '{"items":[1]}'],
    );
  });

  void test('positions read as ranges', () => {
    assert.equal(describePositions([0, 1, 2, 5, 7, 8]), '0–2, 5, 7–8');
    assert.equal(describePositions([1, 3, 5], 2), '1, 3, …');
    assert.equal(describePositions([]), '');
  });
});
