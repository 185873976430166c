import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { killAll, signToken, spawnService, uniqueSchema, type ServiceProcess } from './process-service.ts';
import { dropServiceSchema } from './server-schema.ts';

/**
 * What a whole test file shares (its services, its browser), started before the file's first test
 * and stopped after its last; nothing is started when `skip` (the file's tests skip too). Answers
 * a getter for the started value, undefined until it has started.
 */
export function startedForFile<T>(
  start: () => Promise<T>,
  stop: (value: T) => Promise<void>,
  { skip = false }: { skip?: boolean } = {},
): () => T | undefined {
  let started: T | undefined;
  before(async () => {
    if (!skip) started = await start();
  });
  after(async () => {
    if (started !== undefined) await stop(started);
  });
  return () => started;
}

/**
 * `current()` as an object a file can name at its top and its tests use later: each member is read
 * from `current()` when used, and throws while there is nothing (`what` says what is missing).
 */
export function lateBound<T extends object>(current: () => T | undefined, what: string): T {
  return new Proxy({} as T, {
    get(_, member) {
      const value = current();
      if (value === undefined) throw new Error(`${what} is used before it started`);
      // Its methods are closures or bound to it: they need no `this` from the caller.
      return Reflect.get(value, member) as unknown;
    },
  });
}

/**
 * The setup of a file whose tests run the service as processes: one secret and one database (a
 * data directory, or a schema of its own on the server of TEST_DATABASE_URL) shared by every
 * process the file starts, so a process started again finds what the one before it left. After the
 * file its processes are killed and its data removed (a schema is kept when a test failed).
 */
export function serviceProcessesForFile(name: string) {
  const secret = randomBytes(32).toString('hex');
  const serverUrl = process.env.TEST_DATABASE_URL;
  const schema = uniqueSchema(`test_${name.replaceAll('-', '_')}`);
  const spawned: ServiceProcess[] = [];
  let dataDir: string | undefined;
  before(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `${name}-`));
  });
  after(async () => {
    await killAll(spawned);
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
    if (serverUrl) await dropServiceSchema(serverUrl, schema);
  });
  return {
    /** The server the file's processes share, if any (TEST_DATABASE_URL). */
    serverUrl,
    /** The schema of the file's processes on that server (its job queue's is `<schema>_jobs`). */
    schema,
    /** Starts a process on the file's data with `env` added, as `spawnService` does. */
    async start(env: Record<string, string> = {}, entry?: readonly string[]): Promise<ServiceProcess> {
      if (!dataDir) throw new Error('a service process is started before the file’s setup ran');
      const proc = await spawnService(
        {
          AUTH_JWT_SECRET: secret,
          DATA_DIR: dataDir,
          ...(serverUrl ? { DATABASE_URL: serverUrl, DATABASE_SCHEMA: schema } : {}),
          ...env,
        },
        60_000,
        entry,
      );
      spawned.push(proc);
      return proc;
    },
    /** A token with all scopes for `tenant`, which the file's processes accept. */
    token: (tenant: string) => signToken(secret, tenant),
  };
}
