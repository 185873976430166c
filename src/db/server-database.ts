import pg from 'pg';
import type { Database, PoolConnections, Queryable } from './database-types.ts';
import { createKeyedMutex } from './keyed-mutex.ts';

/**
 * A PostgreSQL server through `pg`: a pool kept warm, and advisory locks shared by every process.
 * Nothing is kept in a connection's session between statements, so the server may equally be a
 * PgBouncer in transaction pooling mode (docs/deployment.md): no startup options, settings `SET
 * LOCAL` in the transaction that needs them, locks held by a transaction left open while they guard.
 */

const LOCK_POLL_MS = 100;
/** How long a read beside a transaction waits for a table lock before it gives up. */
export const READER_LOCK_TIMEOUT_MS = 2_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// Timestamps and bigints come back as strings from both drivers' raw values in a few places; the
// repositories cast counts to int and read timestamps as Date, so both drivers agree.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * Opens the server at `url`; with `schema`, every statement works in that schema (a `SET LOCAL
 * search_path` in its transaction: a statement outside one gets a transaction of its own). `keepOpen`
 * connections are opened before this resolves (or it throws) and never closed for being idle; the
 * rest of the `max` close after `idleMs`. A burst of requests then finds its connections ready
 * rather than waiting for new backends, whose start shows in the status tail. Kept
 * connections that are lost (the server restarted, a backend was terminated) are opened again in the
 * background, retrying every 0.1–5 s while the server is away.
 *
 * Longer than 120 lines on purpose: most of it is the returned `Database` object, whose methods
 * close over the two pools, the schema's `BEGIN` and the local mutex built above it; the parts that
 * need none of them (filling and refilling the pool) are functions of their own below.
 */
export async function openServerDatabase(
  url: string,
  {
    max = 10,
    keepOpen = 0,
    idleMs = 10_000,
    readers = 0,
    schema,
    applicationName = 'catalog-ingestion',
    connectTimeoutMs = 0,
    statementTimeoutMs = 0,
    onRefillError = () => undefined,
  }: {
    max?: number;
    /** Connections of the pool for reads beside a transaction ({@link Database.reader}); none at 0. */
    readers?: number;
    keepOpen?: number;
    idleMs?: number;
    schema?: string | undefined;
    /** The connections' `application_name`, which `pg_stat_activity` shows the server's operators. */
    applicationName?: string;
    /** How long opening a connection may take before it fails; 0 waits as long as the OS does. */
    connectTimeoutMs?: number;
    /**
     * The server's `statement_timeout` for every statement of this pool (`SET LOCAL` in its
     * transaction, which a statement then always gets); 0 leaves the server's own.
     */
    statementTimeoutMs?: number;
    /** Told the first error of each outage that keeps the kept connections from reopening. */
    onRefillError?: (error: Error) => void;
  } = {},
): Promise<Database> {
  const connection = {
    connectionString: url,
    idleTimeoutMillis: idleMs,
    application_name: applicationName,
    connectionTimeoutMillis: connectTimeoutMs,
    // A peer that vanished (power loss, partition) must not keep its advisory locks for the OS's
    // two-hour keepalive default: probe idle connections after 10 s.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  const pool = new pg.Pool({ ...connection, max, min: Math.min(keepOpen, max) });
  // Opened as reads need them, and closed when idle: an API process never opens one. A read queued
  // behind a table lock gives up (55P03, which the job retries): the lock may itself be waiting for
  // the transaction that waits for this read, a cycle PostgreSQL cannot see (Database.reader).
  const readerPool = readers > 0 ? new pg.Pool({ ...connection, max: readers }) : null;
  // Each statement's settings, sent with its BEGIN as one simple query: they cost no round trip.
  const settings = [
    ...(schema ? [`SET LOCAL search_path TO ${quoteIdentifier(schema)}`] : []),
    ...(statementTimeoutMs > 0 ? [`SET LOCAL statement_timeout = ${statementTimeoutMs}`] : []),
  ];
  const begin = beginWith(settings);
  const beginReader = beginWith([...settings, `SET LOCAL lock_timeout = ${READER_LOCK_TIMEOUT_MS}`]);
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  readerPool?.on('error', () => undefined);
  const local = createKeyedMutex();

  const wrap = (client: pg.Pool | pg.PoolClient): Queryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      const result = await client.query(text, params as unknown[] | undefined);
      return result.rows as R[];
    },
    async exec(text: string) {
      // A multi-statement string answers one result per statement.
      const result = (await client.query(text)) as pg.QueryResult | pg.QueryResult[];
      const last = Array.isArray(result) ? result.at(-1) : result;
      return (last?.rows ?? []) as Record<string, unknown>[];
    },
  });

  /** Runs `fn` in a transaction on a connection of `from`, opened by `opening` (BEGIN and its settings). */
  const inTransaction = async <T>(from: pg.Pool, opening: string, fn: (tx: Queryable) => Promise<T>) => {
    const lease = await checkOut(from);
    const { client } = lease;
    try {
      await client.query(opening);
      const value = await fn(wrap(client));
      await client.query('COMMIT');
      return value;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      lease.release();
    }
  };

  /**
   * The main pool's statements with the settings (the schema's search_path, the statement
   * timeout): each in a transaction of its own, opened with them; without any, straight on the
   * pool. A multi-statement `exec` runs as one implicit transaction, so the settings go in front of
   * it: they last up to the string's first COMMIT (pg-boss's locked sections end with theirs, and
   * name their schema).
   */
  const statements = (): Queryable => {
    const direct = wrap(pool);
    if (settings.length === 0) return direct;
    return {
      query: (text, params) => inTransaction(pool, begin, (tx) => tx.query(text, params)),
      exec: (text) => direct.exec(`${settings.join('; ')}; ${text}`),
    };
  };
  const readerStatements = (from: pg.Pool): Queryable => ({
    query: (text, params) => inTransaction(from, beginReader, (tx) => tx.query(text, params)),
    exec: (text) => inTransaction(from, beginReader, (tx) => tx.exec(text)),
  });

  const kept = Math.min(keepOpen, max);
  const refused = await fillPool(pool, kept);
  if (refused) {
    await pool.end().catch(() => undefined);
    await readerPool?.end().catch(() => undefined);
    throw refused;
  }
  const refill = keepFilled(pool, kept, onRefillError);

  return {
    kind: 'server',
    ...statements(),
    ...(readerPool
      ? { reader: readerStatements(readerPool), readerConnections: () => connectionsOf(readerPool) }
      : {}),
    connections: () => connectionsOf(pool),
    transaction: (fn) => inTransaction(pool, begin, fn),
    async withLock(name, waitMs, fn) {
      // Deployments sharing one server in different schemas must not share lock keys.
      const key = `${schema ?? 'public'}:${name}`;
      return local.tryRun(key, waitMs, async () => {
        const lease = await checkOut(pool);
        const { client } = lease;
        let open = false;
        try {
          // The lock belongs to a transaction left open while `fn` runs (on other connections): a
          // transaction pooler keeps it on one server connection, and ending it, or losing the
          // connection, releases the lock. A server-wide idle_in_transaction_session_timeout must
          // not end it mid-run.
          await client.query(beginWith(['SET LOCAL idle_in_transaction_session_timeout = 0']));
          open = true;
          const deadline = Date.now() + waitMs;
          let locked = false;
          for (;;) {
            // The simple query protocol (no parameters: the key as an escaped literal). A query
            // with parameters leaves its unnamed portal open while the transaction idles, and
            // the portal's snapshot holds back the xmin horizon of the whole server: for as long as
            // a tenant's batches drain, no dead row anywhere could be pruned or vacuumed, and
            // rows the worker updates again and again grew ever longer version chains
            // (docs/performance.md, "2026-12-06 evening: the tenant lock held back vacuum").
            const { rows } = await client.query<{ ok: boolean }>(
              `SELECT pg_try_advisory_xact_lock(hashtextextended(${client.escapeLiteral(key)}, 0)) AS ok`,
            );
            locked = rows[0]?.ok === true;
            if (locked || Date.now() >= deadline) break;
            await sleep(LOCK_POLL_MS);
          }
          if (!locked) return null;
          return { value: await fn(lease.lost) };
        } finally {
          // A connection that cannot end the transaction is destroyed instead, which ends it as well.
          let destroy = false;
          if (open && !lease.lost.aborted) {
            await client.query('ROLLBACK').catch(() => {
              destroy = true;
            });
          }
          lease.release(destroy);
        }
      });
    },
    async close() {
      refill.stop();
      // The main pool first: a transaction still running may wait for a reader, which an ended
      // reader pool would never hand it (pg-pool leaves such a wait pending).
      await pool.end();
      await readerPool?.end();
    },
  };
}

/** `BEGIN` followed by `settings`, as one string (one round trip). */
function beginWith(settings: string[]): string {
  return ['BEGIN', ...settings].join('; ');
}

/** `name` as a quoted SQL identifier. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A pool's connections now: open, idle among them, and queries waiting for one. */
function connectionsOf(pool: pg.Pool): PoolConnections {
  return { open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount };
}

/** A connection taken from the pool, until {@link Lease.release} hands it back. */
interface Lease {
  client: pg.PoolClient;
  /** Aborts when the connection is lost while it is out (the server ended it, the network failed). */
  lost: AbortSignal;
  /** Hands the connection back, or closes it when `destroy` is set or it was lost. */
  release(destroy?: boolean): void;
}

/**
 * Takes a connection from the pool and listens for its errors while it is out. The pool listens only
 * to idle connections, and `pg` emits an error event without a listener, which ends the process:
 * a lock holder's connection sits idle for as long as its holder works, so a PostgreSQL restart or
 * a terminated backend would otherwise take every worker down with it. The query in flight, if any,
 * fails on its own; the lost connection is closed rather than handed back.
 */
async function checkOut(pool: pg.Pool): Promise<Lease> {
  const client = await pool.connect();
  const lost = new AbortController();
  const onError = (error: Error) => lost.abort(error);
  client.on('error', onError);
  return {
    client,
    lost: lost.signal,
    release(destroy = false) {
      if (destroy || lost.signal.aborted) {
        // Still listening: a closing connection may report its end once more.
        client.release(true);
        return;
      }
      client.off('error', onError);
      client.release();
    },
  };
}

/**
 * Opens `count` connections on a pool that holds none yet, and hands them straight back. Returns the
 * first error, if any.
 */
async function fillPool(pool: pg.Pool, count: number): Promise<Error | undefined> {
  const opening = await Promise.allSettled(Array.from({ length: count }, () => pool.connect()));
  for (const result of opening) if (result.status === 'fulfilled') result.value.release();
  return firstError(opening);
}

function firstError(results: PromiseSettledResult<unknown>[]): Error | undefined {
  const refused = results.find((result) => result.status === 'rejected');
  if (!refused) return undefined;
  return refused.reason instanceof Error ? refused.reason : new Error(String(refused.reason));
}

/**
 * Opens the connections a pool in use lacks to hold `kept` again, without ever waiting on a busy one
 * while holding another (a lock holder waiting for a second connection would then wait on us). The
 * pool hands out idle connections before it opens new ones, so it asks, in one go, for every idle
 * connection plus the missing ones, and hands each back the moment it has it. While queries wait for
 * a connection it does nothing: they are opening what they need. Says whether the pool was busy.
 */
async function topUpPool(pool: pg.Pool, kept: number): Promise<Error | 'busy' | undefined> {
  const missing = kept - pool.totalCount;
  if (missing <= 0) return undefined;
  if (pool.waitingCount > 0) return 'busy';
  const asks = Array.from({ length: pool.idleCount + missing }, () =>
    pool.connect().then((client) => client.release()),
  );
  return firstError(await Promise.allSettled(asks));
}

/**
 * Refills the pool to `kept` connections whenever it loses one, backing off while that fails and
 * calling `onError` with the first failure of each outage.
 */
function keepFilled(pool: pg.Pool, kept: number, onError: (error: Error) => void): { stop(): void } {
  const FIRST_DELAY_MS = 100;
  const LONGEST_DELAY_MS = 5_000;
  let delay = FIRST_DELAY_MS;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped || timer || pool.totalCount >= kept) return;
    timer = setTimeout(() => {
      void topUpPool(pool, kept).then((outcome) => {
        timer = undefined;
        if (outcome instanceof Error) {
          if (!failing && !stopped) onError(outcome);
          failing = true;
          delay = Math.min(delay * 2, LONGEST_DELAY_MS);
        } else {
          failing = false;
          delay = FIRST_DELAY_MS;
        }
        schedule();
      });
    }, delay);
    // The refill never keeps a process alive on its own.
    timer.unref();
  };
  if (kept > 0) pool.on('remove', schedule);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
