import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';
import { jobQueueSchema, startJobQueue } from '../queue/job-queue.ts';

/**
 * `npm run migrate`: applies pending schema migrations to the configured database, sets up the
 * job queue's tables (pg-boss installs and upgrades its own), and exits. A deployment can run it
 * once, as a user allowed to change the schema, before starting processes that are not.
 */
const config = loadConfig();
const db = await openDatabase({
  databaseUrl: config.databaseUrl,
  databaseSchema: config.databaseSchema,
  dataDir: config.dataDir,
});
try {
  const schema = config.databaseUrl ? config.databaseSchema : undefined;
  const applied = await migrate(db, schema);
  process.stdout.write(
    applied.length ? `applied migrations: ${applied.join(', ')}\n` : 'schema is up to date\n',
  );
  const queue = await startJobQueue(db, { schema: jobQueueSchema(schema) });
  await queue.stop(1_000);
  process.stdout.write(`job queue ready (schema ${queue.schema})\n`);
} finally {
  await db.close();
}
