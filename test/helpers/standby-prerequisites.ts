import { existsSync, readdirSync } from 'node:fs';

/**
 * Why a test of a primary and its streaming standby (reliability/standby-pair.ts) skips here, or
 * false: it needs PostgreSQL's server binaries and PgBouncer, and runs with the server tests
 * (TEST_DATABASE_URL set) only, so that `.ci/run` runs it once, not in the embedded pass as well;
 * it starts servers of its own and does not use that one.
 */
export function standbyPairMissing(): string | false {
  if (!process.env.TEST_DATABASE_URL) return 'a server test: runs with TEST_DATABASE_URL set';
  const root = '/usr/lib/postgresql';
  const hasServer =
    existsSync(root) && readdirSync(root).some((v) => existsSync(`${root}/${v}/bin/pg_basebackup`));
  if (!hasServer) return 'needs the PostgreSQL server binaries (Debian: postgresql-15)';
  if (!existsSync('/usr/sbin/pgbouncer')) return 'needs /usr/sbin/pgbouncer (Debian: pgbouncer)';
  return false;
}
