import { test } from 'node:test';
import assert from 'node:assert/strict';
import { xlsxChunks } from '../../src/export/xlsx-writer.ts';
import type { StoredProduct } from '../../src/export/ingest-parts.ts';
import { generateBatch } from '../../bench/catalog-generator.ts';

/**
 * The XLSX writer holds a page's sheet XML and its compressed bytes, however many pages come
 * (CONTRACT §11.4: memory flat): it compresses a page before it takes the next, and hands the bytes
 * on before that (src/export/xlsx-writer.ts).
 */
void test('an XLSX export of 20,000 products holds its buffers flat while the file is read', async () => {
  async function* pages(): AsyncGenerator<StoredProduct[]> {
    for (let page = 0; page < 40; page++) yield generateBatch('mem', page, { size: 500 }) as StoredProduct[];
  }
  const before = process.memoryUsage().arrayBuffers;
  let most = 0;
  let bytes = 0;
  for await (const chunk of xlsxChunks(pages())) {
    bytes += chunk.length;
    most = Math.max(most, process.memoryUsage().arrayBuffers - before);
  }
  assert.ok(bytes > 5_000_000, `an XLSX of ${bytes} bytes`);
  const mib = most / 1024 / 1024;
  assert.ok(mib < 16, `buffers grew by ${mib.toFixed(1)} MiB`);
});
