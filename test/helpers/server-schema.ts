import pg from 'pg';

/** Drops a service's schema on a PostgreSQL server, with its job queue's (`<schema>_jobs`). */
export async function dropServiceSchema(serverUrl: string, schema: string): Promise<void> {
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
