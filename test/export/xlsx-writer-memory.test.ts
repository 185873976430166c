import { readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { xlsxChunks } from '../../src/export/xlsx-writer.ts';
import type { StoredProduct } from '../../src/export/ingest-parts.ts';
import { generateBatch } from '../../bench/catalog-generator.ts';

/**
 * The XLSX writer holds a page's sheet XML and its compressed bytes, however many pages come
 * (docs/reference.md §11.4: memory flat): it compresses a page before it takes the next, and hands the bytes
 * on before that; the shared-strings table waits in a temporary file (src/export/xlsx-writer.ts).
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

/** The temporary files of the shared-strings table (src/export/shared-strings-spool.ts). */
const spools = async () =>
  (await readdir(os.tmpdir())).filter((name) => name.startsWith('catalog-export-strings-'));

void test("the shared-strings spool is its owner's alone while it lives, and gone when the export ends or its reader leaves", async () => {
  async function* pages(): AsyncGenerator<StoredProduct[]> {
    for (let page = 0; page < 4; page++) yield generateBatch('spool', page, { size: 200 }) as StoredProduct[];
  }
  const before = await spools();
  // A reader that leaves after the first bytes: the generator's `finally` removes the spool.
  for await (const chunk of xlsxChunks(pages())) {
    assert.ok(chunk.length >= 0);
    const open = (await spools()).filter((name) => !before.includes(name));
    assert.equal(open.length, 1);
    assert.equal((await stat(path.join(os.tmpdir(), open[0]!))).mode & 0o777, 0o600);
    break;
  }
  assert.deepEqual(await spools(), before);
  // A whole export.
  let bytes = 0;
  for await (const chunk of xlsxChunks(pages())) bytes += chunk.length;
  assert.ok(bytes > 100_000);
  assert.deepEqual(await spools(), before);
});
