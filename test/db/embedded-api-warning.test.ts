import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig, type Role } from '../../src/config.ts';
import { startService } from '../../src/app/start-service.ts';
import { embeddedTemplate } from '../helpers/embedded-template.ts';

/**
 * ROLE=api on the embedded database starts (tests rely on it), but no worker can ever reach that
 * database from another process, so it says at start that accepted batches wait for one with a worker.
 */

const WARNING =
  'ROLE=api on the embedded database: no other process can open it while this one runs, so ' +
  'accepted batches wait until a process with a worker (ROLE=all or ROLE=worker) opens DATA_DIR';

/** Starts and stops a service of `role` on an in-memory embedded database; returns what it logged. */
async function startLogs(role: Role): Promise<Array<{ level: number; msg: string }>> {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadConfig({
    NODE_ENV: 'test',
    ROLE: role,
    AUTH_JWT_SECRET: randomBytes(32).toString('hex'),
  });
  const service = await startService(config, {
    listen: false,
    dataDir: null,
    logger: pino({ level: 'info' }, sink),
    embeddedTemplate: await embeddedTemplate(),
    analyzer: false,
  });
  await service.stop();
  return lines.map((line) => JSON.parse(line) as { level: number; msg: string });
}

void test('ROLE=api on the embedded database starts and warns once that batches wait for ROLE=all', async () => {
  const logs = await startLogs('api');
  assert.deepEqual(
    logs.filter((entry) => entry.msg === WARNING).map((entry) => entry.level),
    [40],
  );
});

void test('ROLE=all on the embedded database gives no such warning', async () => {
  const logs = await startLogs('all');
  assert.deepEqual(
    logs.filter((entry) => entry.level >= 40),
    [],
  );
});
