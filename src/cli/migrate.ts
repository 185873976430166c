import { loadConfig } from '../config.ts';
import { openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrate.ts';

/** `npm run migrate`: applies pending schema migrations to the configured database and exits. */
const config = loadConfig();
const db = await openDatabase({
  databaseUrl: config.databaseUrl,
  databaseSchema: config.databaseSchema,
  dataDir: config.dataDir,
});
try {
  const applied = await migrate(db, config.databaseUrl ? config.databaseSchema : undefined);
  process.stdout.write(
    applied.length ? `applied migrations: ${applied.join(', ')}\n` : 'schema is up to date\n',
  );
} finally {
  await db.close();
}
