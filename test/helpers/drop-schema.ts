import pg from 'pg';

/**
 * Drops a service's schema on a PostgreSQL server with its job queue's (`<schema>_jobs`). Plain, for
 * the bench and the reliability runs; a test file drops through `dropServiceSchema`, which keeps
 * them when a test failed.
 */
export async function dropSchemaWithJobs(serverUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(
      `DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${schema}_jobs CASCADE`,
    );
  } finally {
    await client.end();
  }
}
