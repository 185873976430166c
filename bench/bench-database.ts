import pg from 'pg';

/**
 * A database of its own on the server for the service a bench run measures, as a deployment has
 * one (docs/deployment.md), rather than a schema of the shared one. In a schema every statement
 * outside a transaction costs three round trips instead of one (`BEGIN` with `SET LOCAL
 * search_path`, the statement, `COMMIT`: src/db/server-database.ts). Counted over 10 batches, the
 * worker thread sent 409 statements in a schema and 223 without, each of them two hops through a
 * pooler: a cost no deployment without `DATABASE_SCHEMA` pays (docs/performance.md, Method). Needs
 * a role that may create databases, and PostgreSQL 13 or later (`DROP DATABASE … WITH (FORCE)`).
 *
 * `directUrl` reaches the server itself, to create and drop the database; `serviceUrl` is the
 * service's way there (the same server, or a PgBouncer whose `[databases]` passes any name through,
 * as .ci/start-pgbouncer's `*` does), and the returned `url` is it with the new database's name.
 */
export async function createBenchDatabase(
  directUrl: string,
  serviceUrl: string,
  name: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: directUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(serviceUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    // FORCE: a pooler may still hold server connections to it after the service has stopped.
    drop: () => admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  };
}
