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

/** The envelope `{"items":[…]}` of `texts`, built from the items' own text, so numbers go out exactly as written. */
export function envelope(texts: readonly string[]): string {
  return `{"items":[${texts.join(',')}]}`;
}

/**
 * The envelope size at which a batch is cut early, whatever its count: under the 32 MiB body limit
 * every deployment of the service accepts (CONTRACT §2), with room for the envelope.
 */
export const MAX_BATCH_BYTES = 30 * 1024 * 1024;

/** Groups items into batches of at most `size` items and `maxBytes` bytes; holds one batch at a time. */
export async function* batchesOf(
  items: AsyncIterable<WellFormedItem>,
  { size, maxBytes = MAX_BATCH_BYTES }: { size: number; maxBytes?: number },
): AsyncGenerator<Batch> {
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
    const itemBytes = Buffer.byteLength(text) + 1;
    if (texts.length > 0 && bytes + itemBytes > maxBytes) yield cut();
    texts.push(text);
    positions.push(position);
    bytes += itemBytes;
    if (texts.length >= size) yield cut();
  }
  if (texts.length > 0) yield cut();
}

/** `0–999, 1204, 2000–2999`: sorted positions as ranges, the first `max` of them. */
export function describePositions(sorted: readonly number[], max = 10): string {
  const ranges: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === (sorted[j] ?? NaN) + 1) j++;
    ranges.push(i === j ? `${sorted[i]}` : `${sorted[i]}–${sorted[j]}`);
    i = j + 1;
  }
  return ranges.length > max ? `${ranges.slice(0, max).join(', ')}, …` : ranges.join(', ');
}
