import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Queryable } from '../db/database.ts';
import type { FullProductIngest } from '../catalog/product-schema.ts';
import { readItems, type BatchKey } from '../ingestion/batches/batch-progress.repository.ts';
import type { ItemValidator } from '../validation/item-validator.ts';
import { itemKeys, type ItemFailure } from '../validation/item-errors.ts';

/** Items of a chunk with their index in the batch. */
export type ChunkItems = Array<{ index: number; item: FullProductIngest }>;

/** What validation said of a batch: how many items are valid, and the records of the others. */
export interface Judgement {
  validCount: number;
  failures: ItemFailure[];
}

/** Items validated between two turns of the event loop. */
const VALIDATION_SLICE = 100;

/**
 * A batch's items, as one run (or one preparation ahead of its turn) sees them: read from the
 * stored body and validated on first use, then held until {@link BatchItems.release}. A batch's
 * parsed items are several megabytes of small objects, so a run lets them go as soon as its last
 * chunk is merged; a rare path that needs them after that (a sku owned by another product, a write
 * narrowed down item by item) reads them again here. Validation is deterministic, so a second read
 * judges every item as the first did.
 */
export class BatchItems {
  readonly #db: Queryable;
  readonly #key: BatchKey;
  readonly #validateItem: ItemValidator;
  #valid: Map<number, FullProductIngest> | null = null;
  #judgement: Judgement | null = null;

  constructor(db: Queryable, key: BatchKey, validateItem: ItemValidator) {
    this.#db = db;
    this.#key = key;
    this.#validateItem = validateItem;
  }

  /** The batch's judgement; reads the body the first time. Null when the body is gone (the batch ended). */
  async judge(): Promise<Judgement | null> {
    if (this.#judgement) return this.#judgement;
    return (await this.#read()) ? this.#judgement : null;
  }

  /** The valid items of [from, to), in index order; reads the body if they were let go. Null when it is gone. */
  async validIn(from: number, to: number): Promise<ChunkItems | null> {
    const valid = this.#valid ?? (await this.#read());
    if (!valid) return null;
    const items: ChunkItems = [];
    for (let index = from; index < to; index++) {
      const item = valid.get(index);
      if (item) items.push({ index, item });
    }
    return items;
  }

  /** Lets the parsed items go; the judgement stays. */
  release(): void {
    this.#valid = null;
  }

  /**
   * Reads and validates every item. The loop yields now and then, so a long batch does not hold up
   * the HTTP requests this process may also serve.
   */
  async #read(): Promise<Map<number, FullProductIngest> | null> {
    const payloads = await readItems(this.#db, this.#key);
    if (!payloads) return null;
    const valid = new Map<number, FullProductIngest>();
    const failures: ItemFailure[] = [];
    for (let index = 0; index < payloads.length; index++) {
      if (index % VALIDATION_SLICE === VALIDATION_SLICE - 1) await yieldToEventLoop();
      const payload = payloads[index];
      const verdict = this.#validateItem(payload);
      if (verdict.ok) valid.set(index, verdict.item);
      else failures.push({ index, ...itemKeys(payload, verdict.errors), errors: verdict.errors });
    }
    this.#judgement ??= { validCount: valid.size, failures };
    this.#valid = valid;
    return valid;
  }
}
