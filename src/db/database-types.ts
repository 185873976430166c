/**
 * What the service asks of its PostgreSQL, server or embedded, apart from the factory that opens one
 * (database.ts), so that the two implementations need not import the factory that imports them.
 */

/** A connection pool's state: connections open, idle among them, and queries waiting for one. */
export interface PoolConnections {
  open: number;
  idle: number;
  waiting: number;
}

/** Something that runs SQL: the database itself, or one transaction of it. */
export interface Queryable {
  /** One statement with `$n` parameters; returns its rows. */
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /**
   * Several statements without parameters (migrations, pg-boss's own DDL); rows of the last one. On
   * a server's database itself (not a transaction) they run as one implicit transaction: nothing
   * that refuses a transaction block (VACUUM, CREATE INDEX CONCURRENTLY).
   */
  exec(text: string): Promise<Record<string, unknown>[]>;
}

/**
 * The first row a statement returns, as `toRecord` makes it, or null when it returns none: how a
 * repository answers "not found" (what that means is the service's to decide).
 */
export async function queryRow<R, T>(
  db: Queryable,
  text: string,
  params: readonly unknown[],
  toRecord: (row: R) => T,
): Promise<T | null> {
  const rows = await db.query<R>(text, params);
  return rows[0] === undefined ? null : toRecord(rows[0]);
}

/** The service's PostgreSQL: a server through `pg`, or PGlite embedded in this process. */
export interface Database extends Queryable {
  readonly kind: 'server' | 'embedded';
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` while holding an exclusive lock on `key` across every process that shares the
   * database (on a server, a transaction-scoped advisory lock in a transaction left open while `fn`
   * runs, which the server drops if this process dies; docs/deployment.md).
   * Returns `null` without running `fn` when the lock is not free within `waitMs`. `lockLost` aborts
   * when the lock's connection is lost while `fn` runs: the server has then dropped the lock, and
   * another process may take it.
   */
  withLock<T>(
    key: string,
    waitMs: number,
    fn: (lockLost: AbortSignal) => Promise<T>,
  ): Promise<{ value: T } | null>;
  /**
   * A server's reads made beside a transaction of this process, while that transaction holds its
   * connection and waits for them (chunk-writer.ts): they run on a small pool of their own. Such a
   * read takes no row lock, so from the main pool only the wait for a second connection could hold
   * it up, and transactions each holding one while waiting for another would deadlock the pool; a
   * reader connection is held by reads alone. What a read can still wait for is a table lock queued
   * before it (an `ALTER TABLE` waiting for the very transaction that waits for the read, a cycle
   * PostgreSQL cannot see): it gives up after `READER_LOCK_TIMEOUT_MS`, and the job is retried.
   * Absent on the embedded database, whose one connection runs every statement in turn.
   */
  readonly reader?: Queryable;
  /** The pool's connections now (a server's): open, idle among them, and queries waiting for one. */
  connections?(): PoolConnections;
  /** The same of the reader pool, where there is one ({@link Database.reader}). */
  readerConnections?(): PoolConnections;
  /** The embedded database's files as a tarball (a template for tests); absent on a server. */
  dump?(): Promise<Blob>;
  close(): Promise<void>;
}
