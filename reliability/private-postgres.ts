import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../test/helpers/process-service.ts';

const run = promisify(execFile);

/**
 * A PostgreSQL server of this run's own, in a temporary directory on a free loopback port, with
 * trust authentication. The chaos run restarts PostgreSQL and terminates backends: on the shared
 * server on 5432 that would hit every other user of it, so it gets a server nobody else uses.
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  /** Restarts the server (`pg_ctl restart -m fast`: every connection is cut). */
  restart(): Promise<void>;
  /** Ends every backend of `user` but the caller's (`pg_terminate_backend`); returns how many. */
  terminateBackends(): Promise<number>;
  /** Stops the server and deletes its directory; safe to call twice. */
  destroy(): Promise<void>;
}

/** Where Debian (and the PGDG packages) install the server binaries of the newest version. */
export function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return path.join(root, versions[0]!, 'bin');
}

/**
 * Runs a server binary; as root through `runuser -u postgres`, since PostgreSQL refuses to run as
 * root (CI runs as root with the Debian packages, which create that user).
 */
export async function asServerUser(binary: string, args: string[]): Promise<string> {
  const command = process.getuid?.() === 0 ? 'runuser' : binary;
  const full = process.getuid?.() === 0 ? ['-u', 'postgres', '--', binary, ...args] : args;
  const { stdout } = await run(command, full, { timeout: 120_000 });
  return stdout;
}

/** Creates and starts a private server; `destroy()` it in a `finally`. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reliability-pg-'));
  if (process.getuid?.() === 0) await run('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const logFile = path.join(dir, 'server.log');
  const port = await freePort();
  const pgCtl = (action: string, ...extra: string[]) =>
    asServerUser(path.join(bin, 'pg_ctl'), [action, '-D', data, '-w', '-t', '60', ...extra]);
  let destroyed = false;
  const destroy = async () => {
    if (destroyed) return;
    destroyed = true;
    await pgCtl('stop', '-m', 'immediate').catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await asServerUser(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      `-c listen_addresses=127.0.0.1`,
      // Several API and worker processes, each with a pool of up to 12, plus the checks' own.
      '-c max_connections=200',
      '-c fsync=off',
    ].join(' ');
    await pgCtl('start', '-l', logFile, '-o', options);
  } catch (error) {
    await destroy();
    throw error;
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    async restart() {
      await pgCtl('restart', '-m', 'fast', '-l', logFile);
    },
    async terminateBackends() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ ended: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        );
        return rows.filter((row) => row.ended).length;
      } finally {
        await client.end();
      }
    },
    destroy,
  };
}
