import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openEmbeddedDatabase } from '../../src/db/embedded-database.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { startJobQueue } from '../../src/queue/job-queue.ts';

/**
 * An embedded database with the schema and the job queue already in place, made once per set of
 * migrations and kept in the temp folder: starting a test service from it skips PGlite's initdb
 * (seconds per test file). The idea is graphile-worker's template database.
 */
export function embeddedTemplate(): Promise<Blob> {
  // One build per process, however many services a test file starts at once.
  template ??= buildOrReadTemplate();
  return template;
}

let template: Promise<Blob> | undefined;

async function buildOrReadTemplate(): Promise<Blob> {
  const migrations = await readMigrations();
  const pkg = await fs.readFile(new URL('../../package-lock.json', import.meta.url), 'utf8');
  const key = createHash('sha256').update(JSON.stringify(migrations)).update(pkg).digest('hex').slice(0, 16);
  const file = path.join(os.tmpdir(), `catalog-service-template-${key}.tar`);
  try {
    return new Blob([await fs.readFile(file)]);
  } catch {
    // first use on this machine: build it below
  }
  const db = await openEmbeddedDatabase(null);
  await migrate(db);
  const queue = await startJobQueue(db);
  await queue.stop(1000);
  const blob = await db.dump!();
  await db.close();
  // Written under a unique name and renamed, so parallel test files never read half a file.
  const partial = `${file}.${randomUUID()}.partial`;
  try {
    await fs.writeFile(partial, Buffer.from(await blob.arrayBuffer()));
    await fs.rename(partial, file);
  } catch {
    // Another test file may be writing the same template; this one has its copy in memory anyway.
    await fs.rm(partial, { force: true });
  }
  return blob;
}
