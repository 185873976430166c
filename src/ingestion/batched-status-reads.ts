import DataLoader from 'dataloader';
import type { Queryable } from '../db/database.ts';
import { UUID } from '../db/uuid.ts';
import { NotFoundError } from '../errors/app-errors.ts';
import { findBatches, type BatchKey, type BatchRow } from './batches/batch.repository.ts';

/** Reads one batch row by tenant and id; null where there is none. */
export type BatchedStatusReads = (tenantId: string, batchId: string) => Promise<BatchRow | null>;

/** The most reads one statement answers; more wait for the next. */
const MAX_READS_PER_QUERY = 100;

/**
 * Status reads, batched: the reads asked for in one turn of the event loop go to the database as
 * one statement. Clients poll status many at a time, and after any pause of the API thread their
 * requests are handled together; one round trip for all of them, instead of one each on as many
 * connections, shortens the status tail while the worker and PostgreSQL share the cores.
 *
 * Nothing is cached: each statement is sent after every request it answers has arrived, so a read
 * never returns a state older than its request, and two reads in different turns query twice.
 *
 * One statement answers many requests, of any tenants, so an id that would fail it (one that is not
 * a UUID) is answered null here, without reading, instead of failing its neighbours.
 */
export function createBatchedStatusReads(db: Queryable): BatchedStatusReads {
  const loader = new DataLoader<BatchKey, BatchRow | null>(
    async (keys) => {
      const readable = keys.map((key) => UUID.test(key.batchId));
      const wellFormed = keys.filter((_, i) => readable[i]);
      if (wellFormed.length === keys.length) return findBatches(db, keys);
      const found = wellFormed.length > 0 ? await findBatches(db, wellFormed) : [];
      let next = 0;
      return readable.map((ok) => (ok ? (found[next++] ?? null) : null));
    },
    {
      cache: false,
      maxBatchSize: MAX_READS_PER_QUERY,
      // DataLoader's default dispatches after the current job's promises settle: each request's I/O
      // callback is a job of its own, so that would send one statement per request. `setImmediate`
      // runs once libuv has handled every request that was ready in this turn.
      batchScheduleFn: (dispatch) => setImmediate(dispatch),
    },
  );
  return (tenantId, batchId) => loader.load({ tenantId, batchId });
}

/** The batch, or 404 for an unknown id, a malformed one or another tenant's: all look alike. */
export async function batchOrNotFound(
  read: BatchedStatusReads,
  tenantId: string,
  batchId: string,
): Promise<BatchRow> {
  const row = await read(tenantId, batchId);
  if (!row) throw new NotFoundError('No batch with this id.');
  return row;
}
