import { batchesOf, type Batch, type WellFormedItem } from '../import-pipeline/batches.ts';
import type { SourceItem } from '../import-pipeline/file-items.ts';

/** Batches of a file for a run's workers, one handed out at a time, the next read meanwhile. */
export interface BatchFeed {
  /** The next batch; undefined at the end of the file, or when reading failed (`failed` then says why). */
  next(): Promise<Batch | undefined>;
  /** From now on, the batch after the one handed out is read while it is sent (see below). */
  readAhead(): void;
  /** Whether the whole file was cut into batches. */
  readonly readAll: boolean;
  /** Why reading stopped, when it failed. */
  readonly failed: unknown;
  /** The first position after the last batch handed out. */
  readonly batchedUpTo: number;
  /** The seq of the last batch handed out. */
  readonly lastSeq: number;
  /** Ends the reading (the file is closed). */
  close(): Promise<void>;
}

/**
 * Cuts the well-formed `items` into batches (`batchesOf`); an item that cannot be sent goes to
 * `unsendable` instead. With `readAhead()`, the batch after the one last handed out is read
 * meanwhile: a worker whose batch is done then finds its next one ready, rather than reading it while
 * the service may have nothing to do (a spreadsheet's 1000 items take a tenth of a second or more to
 * read and convert). One batch more in memory. The run turns it on once a batch was accepted: until
 * then the token or the address may be refused, and a run stopped then has read no more than it
 * tried to send. Nothing is read ahead once `signal` aborts.
 */
export function createBatchFeed(
  items: AsyncIterable<SourceItem>,
  {
    batchSize,
    unsendable,
    signal,
  }: {
    batchSize: number;
    unsendable: (item: SourceItem & { text?: undefined }) => Promise<void>;
    signal: AbortSignal;
  },
): BatchFeed {
  async function* wellFormed(): AsyncGenerator<WellFormedItem> {
    for await (const item of items) {
      if (item.text === undefined) await unsendable(item);
      else yield { position: item.position, text: item.text };
    }
  }
  const batches = batchesOf(wellFormed(), { size: batchSize });
  let ahead: Promise<IteratorResult<Batch>> | null = null;
  let aheadOn = false;
  const feed = {
    readAll: false,
    failed: undefined as unknown,
    batchedUpTo: 0,
    lastSeq: 0,
    readAhead: () => void (aheadOn = true),
    close: async () => void (await batches.return(undefined)),
    async next(): Promise<Batch | undefined> {
      try {
        const pending = ahead ?? batches.next();
        ahead = null;
        const next = await pending;
        if (next.done) {
          // A generator that threw answers "done" from then on: that is not the end of the file.
          if (feed.failed === undefined) feed.readAll = true;
          return undefined;
        }
        if (aheadOn && !signal.aborted) {
          ahead = batches.next();
          // Awaited by the next call; until then a failure must not count as unhandled.
          ahead.catch(() => {});
        }
        feed.lastSeq = next.value.seq;
        feed.batchedUpTo = Math.max(feed.batchedUpTo, (next.value.positions.at(-1) ?? -1) + 1);
        return next.value;
      } catch (error) {
        feed.failed = error;
        return undefined;
      }
    },
  };
  return feed;
}
