import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrateAndCheck } from '../db/deployment-check.ts';
import { jobQueueSchema, startJobQueue } from '../queue/job-queue.ts';

/**
 * `npm run migrate`: applies pending schema migrations to the configured database, sets up the
 * job queue's tables (pg-boss installs and upgrades its own), and exits: a deployment step of its
 * own, before new versions start. Every start runs the same steps (finding nothing to do), and
 * needs the right to create in the schema even then: PostgreSQL checks it before `IF NOT EXISTS`.
 */
const config = loadConfig();
const db = await openDatabase({
  databaseUrl: config.databaseUrl,
  databaseSchema: config.databaseSchema,
  dataDir: config.dataDir,
});
try {
  const schema = config.databaseUrl ? config.databaseSchema : undefined;
  const applied = await migrateAndCheck(db, schema);
  process.stdout.write(
    applied.length ? `applied migrations: ${applied.join(', ')}\n` : 'schema is up to date\n',
  );
  const queue = await startJobQueue(db, { schema: jobQueueSchema(schema) });
  await queue.stop(1_000);
  process.stdout.write(`job queue ready (schema ${queue.schema})\n`);
} finally {
  await db.close();
}
