import type { Database } from './database-types.ts';
import { migrate, readMigrations } from './migrate.ts';

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
