import fs from 'node:fs';
import { once } from 'node:events';
import type { StoredProduct } from '../src/export/ingest-parts.ts';
import { csvChunks } from '../src/export/csv-writer.ts';
import { xlsxChunks } from '../src/export/xlsx-writer.ts';
import { BATCH, generateBatch } from './catalog-generator.ts';

/** The file forms the command-line client imports, as the bench writes them. */
export type CatalogFileFormat = 'jsonl' | 'csv' | 'xlsx';

/** Every form a catalog file is written in here; JSONL is the import bench's reference. */
export const CATALOG_FILE_FORMATS: readonly CatalogFileFormat[] = ['jsonl', 'csv', 'xlsx'];

/** The generated catalog's batches, one page (1000 products) at a time, as the export hands them over. */
async function* generatedPages(
  prefix: string,
  batches: number,
  size: number,
): AsyncGenerator<StoredProduct[]> {
  for (let b = 0; b < batches; b++) yield generateBatch(prefix, b, { size }) as StoredProduct[];
}

/**
 * Writes `batches` × `size` generated products (bench/catalog-generator.ts) to `file` in `format`:
 * JSONL a product per line; CSV and XLSX by the export's own writers (src/export/), so the files are
 * those a catalog export gives and the import reads. Streamed: a file of any size is written holding
 * one batch. Resolves with the file's size in bytes.
 */
export async function writeCatalogFile(
  file: string,
  format: CatalogFileFormat,
  { prefix, batches, size = BATCH }: { prefix: string; batches: number; size?: number },
): Promise<number> {
  const out = fs.createWriteStream(file);
  const chunks: AsyncIterable<string | Uint8Array> =
    format === 'jsonl'
      ? (async function* () {
          for await (const page of generatedPages(prefix, batches, size)) {
            yield page.map((product) => `${JSON.stringify(product)}\n`).join('');
          }
        })()
      : format === 'csv'
        ? csvChunks(generatedPages(prefix, batches, size))
        : xlsxChunks(generatedPages(prefix, batches, size));
  for await (const chunk of chunks) {
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return fs.statSync(file).size;
}
