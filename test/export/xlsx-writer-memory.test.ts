import { test } from 'node:test';
import assert from 'node:assert/strict';
import { xlsxChunks } from '../../src/export/xlsx-writer.ts';
import type { StoredProduct } from '../../src/export/ingest-parts.ts';
import { generateBatch } from '../../bench/catalog-generator.ts';

/**
 * The XLSX writer holds what it has written but not yet compressed to a few pages, however many
 * pages come (CONTRACT §11.4: memory flat): exceljs does not wait for the zip's compressor, so the
 * writer does (src/export/xlsx-writer.ts). Without that wait, the sheet's XML piled up in buffers
 * here at about 4 MiB per 1000 products (80 MiB for these 20,000; with it, about 22).
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
  assert.ok(bytes > 10_000_000, `an XLSX of ${bytes} bytes`);
  const mib = most / 1024 / 1024;
  assert.ok(mib < 48, `buffers grew by ${mib.toFixed(1)} MiB`);
});
