import type { Database, Queryable } from './database-types.ts';

/**
 * Reads a streaming replica may serve (the export, the search, product history) without a client
 * missing its own writes (docs/deployment.md#read-replica): a read takes the primary's WAL position
 * as it begins and goes to the replica once the replica has replayed up to it, so every write
 * committed before the read began is visible; otherwise, and whenever the replica fails, the
 * primary serves it. The one place that rule lives: the three read paths all ask it.
 */

/**
 * How long a read waits for the replica to replay the primary's WAL as of the read's start. A
 * replica that keeps up replays within a few milliseconds; one further behind would make the read
 * slower than the primary answers it, so after this the primary serves it (a search answers in
 * tens of milliseconds, so a quarter of a second is what a lagging replica may add at most).
 */
export const REPLICA_CATCH_UP_MS = 250;
/** How often the replica's replay position is asked for while a read waits for it. */
export const REPLICA_POLL_MS = 10;
/**
 * How long reads go straight to the primary, without asking the replica, after a read found it
 * behind or failing; then one read tries it again. A lag rarely clears at once (a burst of writes
 * to replay, replay held by a query up to max_standby_streaming_delay's 30 s), and without this
 * memory every read pays the whole {@link REPLICA_CATCH_UP_MS} while it lasts. A second makes that
 * one read's wait per second, a quarter of a second at most, and keeps reads on the primary for at
 * most a second after the replica has caught up.
 */
export const REPLICA_SKIP_MS = 1_000;

/**
 * Where a read went: the replica, or the primary because the replica was behind or failed, or
 * because it was either a moment ago ({@link REPLICA_SKIP_MS}) and was not asked.
 */
export type ReplicaReadOutcome = 'replica' | 'behind' | 'failed' | 'skipped';

/** The reads that may be served by a replica. */
export interface ReplicaReads {
  /**
   * Statements for one request's reads that see every write committed before this call: on the
   * replica once it has replayed them (waiting up to {@link REPLICA_CATCH_UP_MS}), else on the
   * primary, at once while the replica was behind or failing a moment ago ({@link REPLICA_SKIP_MS}).
   * A statement the replica fails (unreachable, a recovery conflict, its statement timeout) is run
   * again on the primary, which serves the rest of the request: each statement is a snapshot of its
   * own, and the primary is never behind the replica.
   */
  consistentReader(): Promise<Queryable>;
  close(): Promise<void>;
}

/** Every read on the primary: no `DATABASE_READ_URL`, or the embedded database. */
export function primaryReads(primary: Queryable): ReplicaReads {
  return {
    consistentReader: async () => primary,
    close: async () => undefined,
  };
}

/** WAL positions as PostgreSQL prints them (`pg_lsn`): two hexadecimal numbers. */
const LSN = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/;

/**
 * The primary's WAL flushed so far: every commit answered before now ends at or before it
 * (synchronous_commit's default flushes the commit before answering). As text: `pg` has no parser
 * for pg_lsn. `exec` (no parameters) is one round trip even with DATABASE_SCHEMA.
 */
async function primaryPosition(primary: Queryable): Promise<string> {
  const [row] = await primary.exec('SELECT pg_current_wal_flush_lsn()::text AS lsn');
  const lsn = row?.lsn;
  if (typeof lsn !== 'string' || !LSN.test(lsn)) throw new Error('the primary gave no WAL position');
  return lsn;
}

/**
 * Whether the replica has replayed the WAL up to `lsn`. A server that is not in recovery (a
 * replica promoted, or the primary itself; the start warns of it) is as far as it has written.
 */
async function hasReplayed(replica: Queryable, lsn: string): Promise<boolean> {
  const [row] = await replica.exec(
    `SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_flush_lsn() END
       >= '${lsn}'::pg_lsn AS replayed`,
  );
  return row?.replayed === true;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Asks the replica until it has replayed `lsn`, for up to `waitMs`: the bound holds whatever the
 * replica does. A poll still unanswered at the bound is dropped: the replica is behind if it
 * answered an earlier one, and failed if it answered none (a trivial query a live replica answers
 * in a millisecond; one dropping packets answers nothing and throws no error either).
 */
async function waitForReplay(
  replica: Queryable,
  lsn: string,
  { waitMs, pollMs }: { waitMs: number; pollMs: number },
): Promise<{ outcome: ReplicaReadOutcome; error?: unknown }> {
  const deadline = performance.now() + waitMs;
  let answered = false;
  const polling = (async () => {
    for (;;) {
      const replayed = await hasReplayed(replica, lsn);
      answered = true;
      if (replayed) return { outcome: 'replica' as const };
      if (performance.now() + pollMs > deadline) return { outcome: 'behind' as const };
      await sleep(pollMs);
    }
  })().catch((error: unknown) => ({ outcome: 'failed' as const, error }));
  const silent = () => new Error(`the replica answered no poll of its replay within ${waitMs + pollMs} ms`);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ outcome: ReplicaReadOutcome; error?: unknown }>((resolve) => {
    const atTheBound = () =>
      resolve(answered ? { outcome: 'behind' } : { outcome: 'failed', error: silent() });
    timer = setTimeout(atTheBound, waitMs + pollMs);
  });
  try {
    return await Promise.race([polling, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits up to `waitMs` for `replica` to replay what `primary` has written so far: how a start lets
 * a replica replay the migrations just applied before it checks them. Says whether it did; a
 * replica that fails to answer throws.
 */
export async function waitForReplica(
  primary: Queryable,
  replica: Queryable,
  waitMs: number,
): Promise<boolean> {
  const { outcome, error } = await waitForReplay(replica, await primaryPosition(primary), {
    waitMs,
    pollMs: 50,
  });
  if (outcome === 'failed') throw error;
  return outcome === 'replica';
}

/**
 * Statements on the replica that, once one fails there, run on the primary instead: that statement
 * again, and the request's later ones.
 */
function replicaFirst(replica: Queryable, primary: Queryable, onFailed: (error: unknown) => void): Queryable {
  let failed = false;
  const run = async <T>(statement: (db: Queryable) => Promise<T>): Promise<T> => {
    if (failed) return statement(primary);
    try {
      return await statement(replica);
    } catch (error) {
      failed = true;
      onFailed(error);
      return statement(primary);
    }
  };
  return {
    query: (text, params) => run((db) => db.query(text, params)),
    exec: (text) => run((db) => db.exec(text)),
  };
}

/**
 * The reads of `replica` (its own pool, `DATABASE_READ_URL`), falling back to `primary`. `onRead`
 * hears where each request's reads went, and a replica failure's error: for a metric and a log
 * line, not an answer (the client gets the primary's).
 */
export function createReplicaReads({
  primary,
  replica,
  onRead,
  waitMs = REPLICA_CATCH_UP_MS,
  pollMs = REPLICA_POLL_MS,
  skipMs = REPLICA_SKIP_MS,
}: {
  primary: Queryable;
  replica: Queryable & Pick<Database, 'close'>;
  onRead: (outcome: ReplicaReadOutcome, error?: unknown) => void;
  waitMs?: number;
  pollMs?: number;
  skipMs?: number;
}): ReplicaReads {
  // Until when reads skip the replica (0: since it last served, they ask it), and whether the one
  // read that tries it again once that time has passed is under way. Per process, as the pool is;
  // on the monotonic clock, so that a wall clock stepped back does not skip the replica for as long.
  let skipUntil = 0;
  let trying = false;
  const heard = (outcome: ReplicaReadOutcome, error?: unknown) => {
    skipUntil = outcome === 'replica' ? 0 : performance.now() + skipMs;
    onRead(outcome, error);
  };
  return {
    async consistentReader() {
      if (trying || performance.now() < skipUntil) {
        onRead('skipped');
        return primary;
      }
      // The time has passed: this read alone asks the replica again, the others skip it meanwhile.
      const trial = skipUntil !== 0;
      trying = trial;
      try {
        const lsn = await primaryPosition(primary);
        const { outcome, error } = await waitForReplay(replica, lsn, { waitMs, pollMs });
        heard(outcome, error);
        if (outcome !== 'replica') return primary;
      } finally {
        if (trial) trying = false;
      }
      return replicaFirst(replica, primary, (error) => heard('failed', error));
    },
    close: () => replica.close(),
  };
}
