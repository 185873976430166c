import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/app/start-service.ts';
import { checkReplica, DeploymentError } from '../../src/db/deployment-check.ts';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { openServerDatabase } from '../../src/db/server-database.ts';
import { dropSchemaWithJobs } from '../helpers/drop-schema.ts';
import { freePort } from '../helpers/process-service.ts';

/**
 * What a start checks of DATABASE_READ_URL (docs/deployment.md#read-replica): a start that cannot
 * use it fails with one line that names the setting and never its value (it may hold a password).
 */

const PASSWORD = 's3cret-for-the-replica';

void test('DATABASE_READ_URL without DATABASE_URL: the process exits 1 with one line', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AUTH_JWT_SECRET: 'x'.repeat(32),
      DATABASE_READ_URL: `postgres://reader:${PASSWORD}@127.0.0.1:5433/catalog`,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 1);
  const lines = `${run.stdout}${run.stderr}`.trim().split('\n');
  assert.equal(lines.length, 1, lines.join('\n'));
  const line = JSON.parse(lines[0]!) as { level: number; msg: string };
  assert.deepEqual(
    { level: line.level, msg: line.msg },
    {
      level: 60,
      msg: 'DATABASE_READ_URL needs DATABASE_URL: a replica reads from a PostgreSQL server, and without DATABASE_URL the service runs the embedded database',
    },
  );
});

const serverUrl = process.env.TEST_DATABASE_URL;

void describe(
  'the replica checked at start',
  { skip: serverUrl ? false : 'a server test: runs with TEST_DATABASE_URL set' },
  () => {
    const schemas: string[] = [];
    after(async () => {
      for (const schema of schemas) await dropSchemaWithJobs(serverUrl!, schema);
    });

    /** Starts the service on the test server in a schema of its own, with `readUrl` as the replica; its log lines. */
    const start = async (readUrl: string) => {
      const schema = `test_${randomBytes(6).toString('hex')}`;
      schemas.push(schema);
      const lines: Array<{ level: number; msg: string }> = [];
      const logger = pino(
        { level: 'info' },
        { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) },
      );
      const config = loadConfig({
        NODE_ENV: 'test',
        AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
        DATABASE_URL: serverUrl!,
        DATABASE_SCHEMA: schema,
        DATABASE_READ_URL: readUrl,
        ANALYSIS_ENABLED: 'false',
      });
      const started = startService(config, { listen: false, dataDir: null, logger, keptConnections: 1 });
      return { schema, lines, started };
    };
    /** `serverUrl` with a password and another database of the same server, where the schema is not. */
    const otherDatabase = () => {
      const url = new URL(serverUrl!);
      url.password = PASSWORD;
      url.pathname = url.pathname === '/postgres' ? '/template1' : '/postgres';
      return url.toString();
    };

    test('another database of the same server fails the start with one line, even migrated', async () => {
      // template1 or postgres: its migrations do not matter, the name is checked first.
      const { started } = await start(otherDatabase());
      await assert.rejects(started, (error: unknown) => {
        assert.ok(error instanceof DeploymentError);
        assert.equal(
          error.message,
          "DATABASE_READ_URL: the replica is not a copy of DATABASE_URL's database: its database name differs " +
            '(docs/deployment.md#read-replica)',
        );
        assert.ok(!error.message.includes(PASSWORD));
        return true;
      });
    });

    test('a replica whose statements do not see the migrated schema fails the check with one line', async () => {
      // The same database (so the same cluster and name) through a pool whose schema is not there:
      // what a replica that has not replayed the migrations shows.
      const schema = `test_${randomBytes(6).toString('hex')}`;
      schemas.push(schema);
      const primary = await openServerDatabase(serverUrl!, { schema });
      const replica = await openServerDatabase(serverUrl!, { schema: `${schema}_absent` });
      try {
        await migrate(primary, schema);
        const latest = Math.max(...(await readMigrations()).map((migration) => migration.version));
        await assert.rejects(checkReplica(primary, replica, schema), (error: unknown) => {
          assert.ok(error instanceof DeploymentError);
          assert.equal(
            error.message,
            `DATABASE_READ_URL: the replica's statements see schema none at migration none, not ${schema} at ${latest}: ` +
              "it does not replicate DATABASE_URL's database, or has not replayed its migrations within 10 s " +
              '(docs/deployment.md#read-replica)',
          );
          return true;
        });
      } finally {
        await replica.close();
        await primary.close();
      }
    });

    test('a replica that cannot be reached fails the start with one line', async () => {
      const port = await freePort();
      const { started } = await start(`postgres://postgres:${PASSWORD}@127.0.0.1:${port}/test`);
      await assert.rejects(started, {
        name: 'Error',
        message: `DATABASE_READ_URL: the replica cannot be reached (connect ECONNREFUSED 127.0.0.1:${port}; docs/deployment.md#read-replica)`,
      });
    });

    test('a server that is not in recovery serves the reads, with one warning', async () => {
      const { lines, started } = await start(serverUrl!);
      const service = await started;
      try {
        const warnings = lines.filter((line) => line.level === 40).map((line) => line.msg);
        assert.deepEqual(warnings, [
          'DATABASE_READ_URL leads to a server that is not in recovery: reads go there, but it is not a ' +
            'streaming replica of DATABASE_URL (docs/deployment.md#read-replica)',
        ]);
      } finally {
        await service.stop();
      }
    });
  },
);
