import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../helpers/ingest-cli.ts';
import { dropServiceSchema } from '../helpers/server-schema.ts';
import { openDatabase } from '../../src/db/database.ts';
import { DELIVERY_QUEUE, INGEST_QUEUE } from '../../src/queue/job-queue.ts';

/**
 * `npm run migrate` alone (docs/reference.md §1: migrations "can be run alone") leaves a database the
 * service can use without changing its schema: its own tables and the job queue's.
 */

const serverUrl = process.env.TEST_DATABASE_URL;
const schema = `migrate_cli_${randomBytes(4).toString('hex')}`;
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'migrate-cli-'));
const env: Record<string, string> = serverUrl
  ? { DATABASE_URL: serverUrl, DATABASE_SCHEMA: schema }
  : { DATA_DIR: dataDir };

after(async () => {
  if (serverUrl) await dropServiceSchema(serverUrl, schema);
  await fs.rm(dataDir, { recursive: true, force: true });
});

void test('npm run migrate applies every migration and sets up the job queue, then finds nothing to do', async () => {
  const migrations = (await fs.readdir(new URL('../../src/db/migrations/', import.meta.url)))
    .filter((file) => file.endsWith('.sql'))
    .map((file) => String(Number(file.slice(0, 3))));
  const queueSchema = serverUrl ? `${schema}_jobs` : 'pgboss';

  assert.deepEqual(await runCli('src/cli/migrate.ts', [], env), {
    code: 0,
    stdout: `applied migrations: ${migrations.join(', ')}\njob queue ready (schema ${queueSchema})\n`,
    stderr: '',
  });
  assert.deepEqual(await runCli('src/cli/migrate.ts', [], env), {
    code: 0,
    stdout: `schema is up to date\njob queue ready (schema ${queueSchema})\n`,
    stderr: '',
  });

  const db = await openDatabase({
    databaseUrl: serverUrl,
    databaseSchema: serverUrl ? schema : undefined,
    dataDir,
    poolSize: 1,
  });
  try {
    const queues = await db.query<{ name: string }>(`SELECT name FROM ${queueSchema}.queue ORDER BY name`);
    assert.deepEqual(
      queues.map((queue) => queue.name),
      [INGEST_QUEUE, DELIVERY_QUEUE],
    );
    const batches = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM batches');
    assert.deepEqual(batches, [{ n: 0 }]);
  } finally {
    await db.close();
  }
});
