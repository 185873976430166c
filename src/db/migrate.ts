import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './database.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
// Any fixed number: every process that migrates takes the same transaction lock first.
const MIGRATION_LOCK = 7_301_946;

/** A numbered, forward-only schema change read from `src/db/migrations/NNN_name.sql`. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads the migrations in version order. */
export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const files = (await fs.readdir(dir)).filter((file) => /^\d{3}_[\w-]+\.sql$/.test(file)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 3)),
      name: file.slice(4, -4),
      sql: await fs.readFile(path.join(dir, file), 'utf8'),
    })),
  );
}

/**
 * Applies the migrations that `db` has not seen yet, each in its own transaction. Safe to run from
 * several processes at once: they queue on one lock and each version is applied exactly once.
 * Returns the versions applied by this call.
 */
export async function migrate(db: Database, schema?: string): Promise<number[]> {
  // Every step, the first CREATEs included, under one lock: concurrent first starts would
  // otherwise race on creating the schema and the bookkeeping table.
  const held = await db.withLock(`migrations:${MIGRATION_LOCK}`, 120_000, () => migrateLocked(db, schema));
  if (!held) throw new Error('Could not take the migration lock within 120 s');
  return held.value;
}

async function migrateLocked(db: Database, schema: string | undefined): Promise<number[]> {
  // In a transaction, whose search_path names the schema (docs/deployment.md): not a bare exec.
  await db.transaction(async (tx) => {
    if (schema) await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await tx.exec(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version    integer     PRIMARY KEY,
        name       text        NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  });
  const applied: number[] = [];
  for (const migration of await readMigrations()) {
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (seen.length > 0) return false;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (done) applied.push(migration.version);
  }
  return applied;
}
