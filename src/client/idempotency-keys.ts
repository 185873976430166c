import { createHash, type Hash } from 'node:crypto';
import type { Items } from './batches.ts';

/**
 * The `Idempotency-Key` of each batch a run sends (CONTRACT §10.2), derived from the file rather than
 * drawn at random, so that a run started again after a crash sends the same keys for the same batches
 * and the service answers the batches it already stored instead of storing them twice. A key is the
 * SHA-256 of the file's items up to the end of its batch (so an edit anywhere before it is a new key)
 * with the positions of the part sent (a batch the service refused as a whole is sent again in parts,
 * each a request of its own).
 */
export class BatchKeys {
  readonly #running: Hash = createHash('sha256');

  /** The key base of the next batch cut from the file: call once per batch, in file order. */
  next(batch: Items): string {
    for (const text of batch.texts) this.#running.update(text).update('\n');
    return this.#running.copy().digest('base64url');
  }
}

/** The key of a part of a batch: the batch's base with the part's first position and size (≤ 80 visible ASCII). */
export const partKey = (base: string, part: Items): string =>
  `ingest-${base}-${part.positions[0] ?? 0}-${part.positions.length}`;

/** `batches`, each with the key base of {@link BatchKeys}, taken in file order whoever reads them. */
export async function* withKeys<B extends Items>(
  batches: AsyncIterable<B>,
): AsyncGenerator<B & { keyBase: string }> {
  const keys = new BatchKeys();
  // The batch itself, not a copy: the sender drops its texts once sent, and no copy may keep them.
  for await (const batch of batches) yield Object.assign(batch, { keyBase: keys.next(batch) });
}
