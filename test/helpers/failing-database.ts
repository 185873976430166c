/** Databases that fail the way a dying process or a lost connection does, for the batch processor's recovery tests. */
import type { Database } from '../../src/db/database.ts';
import { createBatchProcessor, type BatchProcessor } from '../../src/ingestion/batch-processor.ts';
import { createItemValidator } from '../../src/ingestion/item-validator.ts';

/** The database, but `controller` aborts once `transactions` transactions have committed. */
export function abortingAfter(db: Database, transactions: number, controller: AbortController): Database {
  let committed = 0;
  return {
    ...db,
    async transaction(fn) {
      const value = await db.transaction(fn);
      if (++committed >= transactions) controller.abort();
      return value;
    },
  };
}

/** The database, but every transaction fails as one on a lost connection does. */
export function losingConnection(db: Database): Database {
  return {
    ...db,
    transaction() {
      return Promise.reject(new Error('Connection terminated unexpectedly'));
    },
  };
}

/** The database, but reading a batch's stored body fails, as a process that dies parsing it does. */
export function dyingOnTheBody(db: Database): Database {
  return {
    ...db,
    query<R>(text: string, params?: readonly unknown[]) {
      if (text.includes('FROM batch_payloads')) return Promise.reject(new Error('heap out of memory'));
      return db.query<R>(text, params);
    },
  };
}

/** The database, but once `commits` transactions have committed the next ones fail the same way. */
export function losingConnectionAfter(db: Database, commits: number): Database {
  let committed = 0;
  return {
    ...db,
    async transaction(fn) {
      if (committed >= commits) throw new Error('Connection terminated unexpectedly');
      const value = await db.transaction(fn);
      committed++;
      return value;
    },
  };
}

/** A batch processor on `db` with the real validator. */
export const processorOn = (db: Database, chunkSize: number, maxAttempts = 3): BatchProcessor =>
  createBatchProcessor({ db, validateItem: createItemValidator(), chunkSize, maxAttempts });

/** Whether the batch's body is still stored (it is dropped when the batch ends). */
export async function bodyStored(db: Database, tenantId: string, batchId: string): Promise<boolean> {
  const rows = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM batch_payloads WHERE tenant_id = $1 AND batch_id = $2',
    [tenantId, batchId],
  );
  return rows[0]!.n === 1;
}
