import fs from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import type { Database, Queryable } from './database-types.ts';
import { createKeyedMutex } from './keyed-mutex.ts';

/** PostgreSQL embedded in this process (PGlite): one session, its data directory claimed by one process. */

/** Thrown when another live process has the embedded database open. */
export class DataDirInUseError extends Error {}

/**
 * Claims `dataDir` for this process: PGlite's files must never be opened by two processes at once
 * (`npm run migrate` beside a running service, say). A lock left by a dead process is taken over.
 */
async function claimDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lock = path.join(dataDir, 'pglite.lock');
  for (;;) {
    try {
      await fs.writeFile(lock, String(process.pid), { flag: 'wx' });
      return () => fs.rm(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(await fs.readFile(lock, 'utf8').catch(() => ''));
    let alive = false;
    try {
      alive = holder > 0 && holder !== process.pid && process.kill(holder, 0);
    } catch {
      alive = false;
    }
    if (alive) {
      throw new DataDirInUseError(
        `The embedded database in ${dataDir} is in use by process ${holder}; it serves one process at a time.`,
      );
    }
    await fs.rm(lock, { force: true });
  }
}

/**
 * Opens (creating if needed) the embedded database under `dataDir`; `null` keeps it in memory.
 * `template` (a `dumpDataDir` tarball) starts an in-memory database from a prepared state.
 */
export async function openEmbeddedDatabase(
  dataDir: string | null,
  { template }: { template?: Blob } = {},
): Promise<Database> {
  // Imported here, so a service on a PostgreSQL server never loads the embedded one.
  const { PGlite } = await import('@electric-sql/pglite');
  let release = async () => undefined as void;
  const files = dataDir ? path.join(dataDir, 'pglite') : undefined;
  if (dataDir && files) {
    await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
    release = await claimDataDir(dataDir);
    // PGlite writes its files readable and writable by every local user (0666 under the usual
    // umask), every tenant's data among them. A directory only this user can enter closes them
    // all, as PostgreSQL's own data directory must be; an older one is closed on its next start.
    await fs.mkdir(files, { recursive: true, mode: 0o700 });
    await fs.chmod(files, 0o700);
  }
  const db = await PGlite.create(files, {
    ...(template ? { loadDataDir: template } : {}),
  }).catch(async (error: unknown) => {
    await release();
    throw error;
  });
  // PGlite is one session in this process: only this process can open the directory, so an
  // in-process lock gives the same exclusion a server's advisory lock gives across processes.
  const local = createKeyedMutex();

  // PGlite runs in this thread and resolves with microtasks only, so a worker awaiting query after
  // query would never let timers, HTTP requests or signals in; yielding a turn after each one does.
  const wrap = (client: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      const result = await client.query<R>(text, params ? [...params] : undefined);
      await yieldToEventLoop();
      return result.rows;
    },
    async exec(text: string) {
      const results = await client.exec(text);
      await yieldToEventLoop();
      return results.at(-1)?.rows ?? [];
    },
  });

  return {
    kind: 'embedded',
    ...wrap(db),
    transaction: (fn) => db.transaction((tx) => fn(wrap(tx))),
    // The lock lives in this process, beside the database: it cannot be lost while held.
    withLock: (key, waitMs, fn) =>
      local.tryRun(key, waitMs, async () => ({ value: await fn(new AbortController().signal) })),
    dump: () => db.dumpDataDir('none'),
    async close() {
      await db.close();
      await release();
    },
  };
}
