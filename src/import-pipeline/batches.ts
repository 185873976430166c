/** An item ready to send: its position in the file and its JSON text. */
export interface WellFormedItem {
  position: number;
  text: string;
}

/** Items to send together: their file positions, in order, and their JSON text, as in the file. */
export interface Items {
  positions: number[];
  texts: string[];
}

/** A batch ready to send: its items, and where it was cut. */
export interface Batch extends Items {
  /** 1-based order in which batches were cut from the file. */
  seq: number;
}

/** Items per submission: the service's limit (docs/api-conventions.md#submitting-a-batch). */
export const MAX_BATCH_ITEMS = 1000;

/**
 * The envelope size at which a batch is cut early, whatever its count: under the 32 MiB body limit
 * every deployment of the service accepts (docs/api-conventions.md), with room for the envelope.
 */
export const MAX_BATCH_BYTES = 30 * 1024 * 1024;

/** The envelope `{"items":[…]}` of `texts`, built from the items' own text, so numbers go out exactly as written. */
export function envelope(texts: readonly string[]): string {
  return `{"items":[${texts.join(',')}]}`;
}

/**
 * The bytes `text` takes in UTF-8, counted without encoding it (no Buffer: the dashboard bundles this
 * file). A lone surrogate counts 3, as the U+FFFD `fetch` sends for it.
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Groups items into batches of at most `size` items (1000 at most, whatever is asked) and `maxBytes`
 * bytes; holds one batch at a time.
 */
export async function* batchesOf(
  items: AsyncIterable<WellFormedItem>,
  { size = MAX_BATCH_ITEMS, maxBytes = MAX_BATCH_BYTES }: { size?: number; maxBytes?: number } = {},
): AsyncGenerator<Batch> {
  const limit = Math.min(Math.max(1, size), MAX_BATCH_ITEMS);
  let seq = 0;
  let texts: string[] = [];
  let positions: number[] = [];
  let bytes = 0;
  const cut = (): Batch => {
    const batch = { seq: ++seq, positions, texts };
    texts = [];
    positions = [];
    bytes = 0;
    return batch;
  };
  for await (const { position, text } of items) {
    const itemBytes = utf8Length(text) + 1;
    if (texts.length > 0 && bytes + itemBytes > maxBytes) yield cut();
    texts.push(text);
    positions.push(position);
    bytes += itemBytes;
    if (texts.length >= limit) yield cut();
  }
  if (texts.length > 0) yield cut();
}
