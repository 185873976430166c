import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { NotFoundError } from '../http/errors.ts';
import { decodeCursor, encodeCursor, invalidCursor } from '../http/cursor.ts';
import { TERMINAL_STATUSES, type BatchRecord, type BatchStatus } from './batch-status.ts';
import { createBatchReader, UUID } from './batch-reader.ts';
import {
  insertBatch,
  insertBatchItems,
  listBatches,
  listItemErrors,
  toBatchRecord,
  type BatchListPosition,
  type ItemErrorRow,
} from './batch.repository.ts';
import { MAX_ITEMS_PER_BATCH } from './ingestion.schemas.ts';
import type { Admission, RateLimiter } from './rate-limiter.ts';

/** A page of a cursor-paginated list. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Submitting batches and reading their progress; knows nothing of HTTP. */
export interface IngestionService {
  /**
   * Counts a submission against the tenant's limits before its body is read; throws 429. The
   * admission holds the RateLimit headers, and `submit` checks the batch's size with it.
   */
  admit(tenantId: string): Promise<Admission>;
  /**
   * Stores the batch and all its items and enqueues it, in one transaction, so that once this
   * resolves the batch is durable and will be processed. `body` is the request's JSON, as sent.
   * Throws 429, storing nothing, when the batch would take the backlog past `admission`'s limit.
   */
  submit(
    tenantId: string,
    batch: { receivedCount: number; body: Uint8Array; admission: Admission },
  ): Promise<{ batch_id: string; received_count: number }>;
  getStatus(tenantId: string, batchId: string): Promise<BatchRecord>;
  listErrors(
    tenantId: string,
    batchId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<ItemErrorRow>>;
  listBatches(
    tenantId: string,
    query: { limit: number; cursor?: string; status?: BatchStatus },
  ): Promise<Page<BatchRecord>>;
}

/** Creates the ingestion service: submission with admission control, status, errors pages and the batch list. */
export function createIngestionService(deps: {
  db: Database;
  queue: JobQueue;
  rateLimiter: RateLimiter;
  /** Called after a batch commits: wakes this process's idle workers (others find it by polling). */
  onSubmitted?: () => void;
}): IngestionService {
  const { db, queue } = deps;
  const readBatch = createBatchReader(db);

  /** The batch, or 404 for an unknown id, a malformed one or another tenant's: all look alike. */
  const batchOf = async (tenantId: string, batchId: string) => {
    const row = await readBatch(tenantId, batchId);
    if (!row) throw new NotFoundError('No batch with this id.');
    return row;
  };

  return {
    admit: (tenantId) => deps.rateLimiter.admit(tenantId),

    async submit(tenantId, { receivedCount, body, admission }) {
      const batchId = uuidv7();
      await db.transaction(async (tx) => {
        await admission.reserve(tx, receivedCount);
        await insertBatch(tx, { tenantId, batchId, receivedCount });
        await insertBatchItems(tx, { tenantId, batchId, body });
        await queue.send({ tenantId, batchId }, { tx });
      });
      deps.onSubmitted?.();
      return { batch_id: batchId, received_count: receivedCount };
    },

    async getStatus(tenantId, batchId) {
      return toBatchRecord(await batchOf(tenantId, batchId));
    },

    async listErrors(tenantId, batchId, { limit, cursor }) {
      const batch = await batchOf(tenantId, batchId);
      const scope = `errors:${batch.batch_id}`;
      const afterIndex = cursor === undefined ? -1 : decodeCursor<number>(cursor, scope, 'number');
      // A position is the index of the last item listed, or -1 before the first: a hand-made one
      // beyond any batch's items is no position (and past 2^31 would overflow the integer column).
      if (afterIndex < -1 || afterIndex >= MAX_ITEMS_PER_BATCH) throw invalidCursor();
      // Items are settled in index order, and a chunk's failures commit with the move of next_index
      // past it. Validation failures further on are recorded earlier, but listing only below
      // next_index keeps a walk from passing an index that may still get a record (a sku_conflict).
      const rows = await listItemErrors(db, {
        tenantId,
        batchId: batch.batch_id,
        afterIndex,
        beforeIndex: batch.next_index,
        limit: limit + 1,
      });
      const data = rows.slice(0, limit);
      const more = rows.length > limit;
      // While the batch runs, more failures may still be recorded after the last one seen, so the
      // cursor stays open; it is null only once the batch is terminal and nothing follows.
      const finished = TERMINAL_STATUSES.includes(batch.status);
      const last = data.at(-1)?.index ?? afterIndex;
      return { data, next_cursor: more || !finished ? encodeCursor(scope, last) : null };
    },

    async listBatches(tenantId, { limit, cursor, status }) {
      const scope = 'batches';
      const before =
        cursor === undefined ? null : toListPosition(decodeCursor<string>(cursor, scope, 'string'));
      const rows = await listBatches(db, { tenantId, before, limit: limit + 1, status: status ?? null });
      const data = rows.slice(0, limit);
      const last = data.at(-1);
      return {
        data: data.map(toBatchRecord),
        next_cursor:
          rows.length > limit && last ? encodeCursor(scope, `${last.created_at} ${last.batch_id}`) : null,
      };
    },
  };
}

const ISO_MILLISECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The position a batch-list cursor holds: the last listed batch's `created_at` and id, both the
 * tenant's own. (A global sequence number would tell a tenant how busy the others are.)
 */
function toListPosition(position: string): BatchListPosition {
  const [createdAt = '', batchId = '', ...rest] = position.split(' ');
  const time = Date.parse(createdAt);
  if (
    rest.length > 0 ||
    !ISO_MILLISECONDS.test(createdAt) ||
    // Every batch was created after 1970; PostgreSQL refuses some earlier years (0000) outright.
    !(time >= 0) ||
    new Date(time).toISOString() !== createdAt ||
    !UUID.test(batchId)
  ) {
    throw invalidCursor();
  }
  return { createdAt, batchId };
}
