/** Databases that fail the way a dying process or a lost connection does, for the batch processor's recovery tests. */
import type { Database } from '../../src/db/database.ts';

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
