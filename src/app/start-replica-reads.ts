import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database, Queryable } from '../db/database.ts';
import { checkReplica } from '../db/deployment-check.ts';
import { createReplicaReads, primaryReads, type ReplicaReads } from '../db/replica-reads.ts';
import { openServerDatabase } from '../db/server-database.ts';
import type { Metrics } from '../observability/metrics.ts';

/**
 * How long opening a replica connection may take: a read waits for the replica a quarter of a
 * second at most (REPLICA_CATCH_UP_MS), and a replica that does not answer must not hold a request's
 * connection attempt for the OS's minutes; the read goes to the primary meanwhile.
 */
const REPLICA_CONNECT_TIMEOUT_MS = 2_000;
/**
 * How long a statement may run on the replica before the replica cancels it; the primary then runs
 * it again (replicaFirst), and the replica's reads skip it for a moment. A page of a
 * 100,000-product export (500 products) reads in about 40 ms (12,210 products/s from a standby in
 * docs/performance.md), a search within 50 ms at p95: 10 s cuts none of them, only a replica that is
 * stuck (a query waiting for a lock that replay holds, a starved machine), and it holds replay back
 * for at most that long rather than max_standby_streaming_delay's 30 s. Not a setting: a statement
 * that needs longer is far outside what these reads are built for, and would need as long on the
 * primary.
 */
export const REPLICA_STATEMENT_TIMEOUT_MS = 10_000;

/** The replica pool's `application_name`, which `pg_stat_activity` shows the server's operators. */
export const REPLICA_READS_APPLICATION_NAME = 'catalog-ingestion-replica-reads';

/**
 * The replica's pool at `url` (`DATABASE_READ_URL`): up to `DATABASE_READ_POOL_SIZE` connections,
 * opened as reads need them, in the same schema, named {@link REPLICA_READS_APPLICATION_NAME} in
 * `pg_stat_activity`, with the timeouts above.
 */
export function openReplicaPool(
  url: string,
  config: Pick<Config, 'databaseReadPoolSize' | 'databaseSchema'>,
): Promise<Database> {
  return openServerDatabase(url, {
    max: config.databaseReadPoolSize,
    schema: config.databaseSchema,
    applicationName: REPLICA_READS_APPLICATION_NAME,
    connectTimeoutMs: REPLICA_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: REPLICA_STATEMENT_TIMEOUT_MS,
  });
}

/**
 * The reads an API process sends to `DATABASE_READ_URL`'s replica (docs/deployment.md#read-replica),
 * or to the primary without one. The replica has a pool of its own ({@link openReplicaPool}) and
 * is checked before the API starts (checkReplica). Its URL is never logged: it may hold a password.
 */
export async function startReplicaReads(
  config: Config,
  { primary, metrics, log }: { primary: Queryable; metrics: Metrics; log: Logger },
): Promise<ReplicaReads> {
  if (!config.databaseReadUrl || !config.databaseUrl) return primaryReads(primary);
  const replica = await openReplicaPool(config.databaseReadUrl, config);
  try {
    const { inRecovery } = await checkReplica(primary, replica, config.databaseSchema);
    if (!inRecovery) {
      log.warn(
        'DATABASE_READ_URL leads to a server that is not in recovery: reads go there, but it is not a ' +
          'streaming replica of DATABASE_URL (docs/deployment.md#read-replica)',
      );
    }
  } catch (error) {
    await replica.close().catch(() => undefined);
    throw error;
  }
  // Warned once when the replica starts failing, not on every request it fails: the metric counts them.
  let failing = false;
  return createReplicaReads({
    primary,
    replica,
    onRead(outcome, error) {
      metrics.replicaReads.inc({ outcome });
      if (outcome === 'failed') {
        log.debug({ err: error }, 'a read the replica failed went to the primary');
        if (!failing)
          log.warn({ err: error }, 'the replica (DATABASE_READ_URL) fails; its reads go to the primary');
        failing = true;
      } else if (outcome === 'replica' && failing) {
        failing = false;
        log.info('the replica (DATABASE_READ_URL) serves reads again');
      } else if (outcome === 'behind') {
        log.debug('the replica was behind the read; the primary served it');
      } else if (outcome === 'skipped') {
        log.debug('the replica was behind or failing a moment ago; the primary served the read');
      }
    },
  });
}
