import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import type { Database } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { AppError } from '../errors/app-errors.ts';
import {
  decodeCursor,
  decodeTimeCursor,
  encodeCursor,
  encodeTimeCursor,
  invalidCursor,
} from '../pagination/cursor.ts';
import { TERMINAL_STATUSES, type BatchStatus } from './batch-status.ts';
import type { Page } from '../pagination/page.ts';
import type { ItemFailure } from '../validation/item-errors.ts';
import { batchOrNotFound, createBatchedStatusReads } from './batched-status-reads.ts';
import {
  insertBatch,
  insertBatchItems,
  listBatches,
  listItemErrors,
  toBatchRecord,
} from './batches/batch.repository.ts';
import { claimIdempotencyKey } from './idempotency-key.repository.ts';
import { MAX_ITEMS_PER_BATCH, type AcceptedBatch, type BatchRecord } from './ingestion.schemas.ts';
import type { Admission, RateLimiter } from './rate-limiter.ts';

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
   * With an `idempotencyKey` (docs/reference.md §10.2) the key is taken in the same transaction; a key the
   * tenant used in the last 24 hours answers the first answer again (`replayed`, nothing stored)
   * when the body's bytes are the same, and throws 422 when they are not. The `label` (docs/reference.md
   * §11.1) is not part of the body: a replay keeps the first request's.
   */
  submit(
    tenantId: string,
    batch: {
      receivedCount: number;
      body: Uint8Array;
      admission: Admission;
      idempotencyKey?: string;
      label?: string;
    },
  ): Promise<{ accepted: AcceptedBatch; replayed: boolean }>;
  getStatus(tenantId: string, batchId: string): Promise<BatchRecord>;
  listErrors(
    tenantId: string,
    batchId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<ItemFailure>>;
  listBatches(
    tenantId: string,
    query: { limit: number; cursor?: string; status?: BatchStatus; label?: string },
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
  const readBatch = createBatchedStatusReads(db);

  const batchOf = (tenantId: string, batchId: string) => batchOrNotFound(readBatch, tenantId, batchId);

  return {
    admit: (tenantId) => deps.rateLimiter.admit(tenantId),

    async submit(tenantId, { receivedCount, body, admission, idempotencyKey, label }) {
      const accepted = { batch_id: uuidv7(), received_count: receivedCount };
      // The hash is of the body's bytes as sent: a client retries with the bytes it sent before.
      const bodySha256 = createHash('sha256').update(body).digest();
      const first = await db.transaction(async (tx) => {
        // The key first: a twin's answer needs no room in the backlog, which its own batch now takes.
        const answered =
          idempotencyKey === undefined
            ? null
            : await claimIdempotencyKey(tx, {
                tenantId,
                key: idempotencyKey,
                bodySha256,
                response: accepted,
              });
        if (answered) return answered;
        await admission.reserve(tx, receivedCount);
        await insertBatch(tx, { tenantId, batchId: accepted.batch_id, receivedCount, label });
        await insertBatchItems(tx, { tenantId, batchId: accepted.batch_id, body });
        await queue.send({ tenantId, batchId: accepted.batch_id }, { tx });
        return null;
      });
      if (!first) {
        deps.onSubmitted?.();
        return { accepted, replayed: false };
      }
      if (!first.bodySha256.equals(bodySha256)) {
        throw new AppError(
          'idempotency-key-mismatch',
          'This Idempotency-Key was used in the last 24 hours with a different body; use a new key for a new submission.',
        );
      }
      return { accepted: first.response, replayed: true };
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

    async listBatches(tenantId, { limit, cursor, status, label }) {
      const scope = 'batches';
      const position = cursor === undefined ? null : decodeTimeCursor(cursor, scope);
      const before = position && { createdAt: position.createdAt, batchId: position.id };
      const rows = await listBatches(db, {
        tenantId,
        before,
        limit: limit + 1,
        status: status ?? null,
        labelPrefix: label ?? null,
      });
      const data = rows.slice(0, limit);
      const last = data.at(-1);
      return {
        data: data.map(toBatchRecord),
        next_cursor:
          rows.length > limit && last
            ? encodeTimeCursor(scope, { createdAt: last.created_at, id: last.batch_id })
            : null,
      };
    },
  };
}
