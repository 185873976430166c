import type { Database, Queryable } from './database-types.ts';
import { migrate, readMigrations } from './migrate.ts';
import { waitForReplica } from './replica-reads.ts';

/**
 * What a start checks of the topology it finds (docs/deployment.md): a server or pooler it cannot
 * work through fails the start with one line that says why and what to change, rather than batches
 * that wait later with nothing logged.
 */

/** A start refused because of how the database is reached; its message is one line. */
export class DeploymentError extends Error {}

/** PgBouncer's answers to what the service cannot work through, and what to change. */
const POOLER_REFUSALS: Array<[RegExp, string]> = [
  [
    /transaction blocks not allowed in statement pooling mode|long transactions not allowed/i,
    'DATABASE_URL leads to a PgBouncer in statement pooling mode; the service needs transactions: ' +
      'use pool_mode = transaction (or session) for this database',
  ],
  [
    /unsupported startup parameter/i,
    'DATABASE_URL leads to a PgBouncer that refuses a startup parameter given in the URL ' +
      '(the service sends none of its own): remove it from the URL, or list it in ignore_startup_parameters',
  ],
];

/** The error `error` becomes when PgBouncer refused it for a reason the operator must change; else itself. */
export function explainPoolerRefusal(error: unknown): unknown {
  const message = error instanceof Error ? error.message : String(error);
  const refusal = POOLER_REFUSALS.find(([pattern]) => pattern.test(message));
  return refusal ? new DeploymentError(`${refusal[1]} (${message}; docs/deployment.md)`) : error;
}

/**
 * Applies the migrations (see {@link migrate}), then checks, through the same pool the service's
 * statements take, that they see what was applied: the schema in effect and every migration
 * recorded. Throws a {@link DeploymentError} otherwise (a pooler sending statements elsewhere than
 * the migrations went, a read-only server, a schema the role cannot use).
 */
export async function migrateAndCheck(db: Database, schema: string | undefined): Promise<number[]> {
  const applied = await migrate(db, schema).catch((error: unknown) => {
    throw explainPoolerRefusal(error);
  });
  if (db.kind !== 'server') return applied;
  const latest = Math.max(...(await readMigrations()).map((migration) => migration.version));
  const [seen] = await db
    .transaction((tx) =>
      tx.query<{ schema: string | null; version: number | null }>(
        'SELECT current_schema() AS schema, (SELECT max(version) FROM schema_migrations) AS version',
      ),
    )
    .catch((error: unknown) => {
      throw explainPoolerRefusal(error);
    });
  // Without DATABASE_SCHEMA the tables are wherever the role's search_path puts them.
  const wanted = schema ?? seen?.schema;
  if (seen?.schema !== wanted || seen?.version !== latest) {
    throw new DeploymentError(
      `DATABASE_URL: statements see schema ${seen?.schema ?? 'none'} at migration ${seen?.version ?? 'none'}, ` +
        `not ${wanted ?? 'none'} at ${latest} as just migrated: the connection string or pooler sends them ` +
        'elsewhere (docs/deployment.md)',
    );
  }
  return applied;
}

/**
 * How long a start waits for the replica to replay the primary's WAL (the migrations just applied)
 * before it compares their migrations: a replica that keeps up needs milliseconds, one catching up
 * after a large migration some seconds.
 */
const REPLICA_START_WAIT_MS = 10_000;

/** The line a replica's failed check starts with, naming the setting and never its value (a password). */
const REPLICA = 'DATABASE_READ_URL';

/**
 * Checks the replica of `DATABASE_READ_URL` at start, after the primary's migrations: that it
 * answers, that it is a copy of the primary's database (the same cluster, by the system identifier
 * that `pg_basebackup` copies, and the same database name), and that its statements (through its own
 * pool, so in `schema`) see the primary's latest migration once it has replayed the primary's WAL.
 * Throws a {@link DeploymentError} otherwise: another server or database, or a replica that has not
 * replayed the schema, would answer reads with errors or with another catalog, whose migrations may
 * well match. Says whether the server is in recovery; one that is not works, but is not a replica
 * (the caller warns).
 */
export async function checkReplica(
  primary: Queryable,
  replica: Queryable,
  schema: string | undefined,
): Promise<{ inRecovery: boolean }> {
  const where = (error: unknown) => (error instanceof Error ? error.message : String(error));
  const [state] = await replica.exec('SELECT pg_is_in_recovery() AS recovering').catch((error: unknown) => {
    throw new DeploymentError(
      `${REPLICA}: the replica cannot be reached (${where(error)}; docs/deployment.md#read-replica)`,
    );
  });
  const inRecovery = state?.recovering === true;
  const [primaryCopy, replicaCopy] = await Promise.all([copyOf(primary), copyOf(replica)]);
  const otherDatabase = primaryCopy.database !== replicaCopy.database;
  const otherCluster =
    primaryCopy.cluster !== null &&
    replicaCopy.cluster !== null &&
    primaryCopy.cluster !== replicaCopy.cluster;
  if (otherDatabase || otherCluster) {
    throw new DeploymentError(
      `${REPLICA}: the replica is not a copy of DATABASE_URL's database: its ` +
        `${otherDatabase ? 'database name' : "cluster's system identifier"} differs (docs/deployment.md#read-replica)`,
    );
  }
  if (inRecovery) await waitForReplica(primary, replica, REPLICA_START_WAIT_MS).catch(() => false);
  const latest = Math.max(...(await readMigrations()).map((migration) => migration.version));
  const seen = await replicaMigration(replica).catch((error: unknown) => {
    throw new DeploymentError(
      `${REPLICA}: the replica's schema cannot be read (${where(error)}; docs/deployment.md#read-replica)`,
    );
  });
  // Without DATABASE_SCHEMA the tables are wherever the role's search_path puts them, on both.
  const [primarySchema] = await primary.exec('SELECT current_schema() AS schema');
  const wanted = schema ?? (typeof primarySchema?.schema === 'string' ? primarySchema.schema : null);
  if (seen.version !== latest || seen.schema !== wanted) {
    throw new DeploymentError(
      `${REPLICA}: the replica's statements see schema ${seen.schema ?? 'none'} at migration ${seen.version ?? 'none'}, ` +
        `not ${wanted ?? 'none'} at ${latest}: it does not replicate DATABASE_URL's database, or has ` +
        `not replayed its migrations within ${REPLICA_START_WAIT_MS / 1000} s (docs/deployment.md#read-replica)`,
    );
  }
  return { inRecovery };
}

/**
 * Which database a server's statements reach: its name, and its cluster's system identifier, which
 * a standby made by `pg_basebackup` shares with its primary. A server that does not let the role
 * read the identifier (`pg_control_system()`, open to all by default; a managed service may close it)
 * is compared by the name alone.
 */
async function copyOf(db: Queryable): Promise<{ database: unknown; cluster: unknown }> {
  const [named] = await db.exec('SELECT current_database() AS database');
  const [control] = await db
    .exec('SELECT (pg_control_system()).system_identifier::text AS cluster')
    .catch(() => [{ cluster: null }]);
  return { database: named?.database, cluster: control?.cluster ?? null };
}

/** The schema a replica's statements see, and its latest migration there (null: not migrated). */
async function replicaMigration(
  replica: Queryable,
): Promise<{ schema: string | null; version: number | null }> {
  const [found] = await replica.exec(
    "SELECT current_schema() AS schema, to_regclass('schema_migrations') IS NOT NULL AS migrated",
  );
  const schema = typeof found?.schema === 'string' ? found.schema : null;
  if (found?.migrated !== true) return { schema, version: null };
  const [row] = await replica.exec('SELECT max(version) AS version FROM schema_migrations');
  return { schema, version: typeof row?.version === 'number' ? row.version : null };
}
