import { ingestParts, type StoredProduct } from './ingest-parts.ts';

/** The media type of the NDJSON export: one JSON item per line, UTF-8 (docs/reference.md §11.4). */
export const NDJSON_TYPE = 'application/x-ndjson';

/**
 * The catalog as NDJSON: each page of products becomes one chunk of lines, each line a valid item
 * ending in `\n` (JSON escapes the newlines inside strings), a product over several lines when a
 * variant holds more than 10 images.
 */
export async function* ndjsonLines(pages: AsyncIterable<readonly StoredProduct[]>): AsyncGenerator<string> {
  for await (const page of pages) {
    let lines = '';
    for (const product of page) {
      for (const part of ingestParts(product)) lines += `${JSON.stringify(part)}\n`;
    }
    if (lines !== '') yield lines;
  }
}
