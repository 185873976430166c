import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './process-service.ts';

/**
 * A private PgBouncer in transaction pooling mode in front of the test server, as docs/deployment.md
 * sets one up: its own port, ini and log in a temporary directory, stopped (and the directory
 * removed) by `stop`.
 */
export interface PgBouncer {
  /** `TEST_DATABASE_URL` with the pooler's port: what a service's DATABASE_URL is set to. */
  url: string;
  /** What PgBouncer logged, for failure messages. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** PgBouncer's `pool_mode`: the service supports `transaction` (and `session`); tests show `statement` refused. */
export type PoolMode = 'transaction' | 'session' | 'statement';

/** Where Debian's package puts the binary, then the PATH. */
function findBinary(): string | null {
  const candidates = [
    '/usr/sbin/pgbouncer',
    ...(process.env.PATH ?? '').split(':').map((dir) => path.join(dir, 'pgbouncer')),
  ];
  return candidates.find((candidate) => existsSync(candidate)) ?? null;
}

/** Why the tests through a pooler skip here, or false when they can run. */
export function pgBouncerMissing(): string | false {
  if (!process.env.TEST_DATABASE_URL)
    return 'needs a PostgreSQL server behind the pooler (set TEST_DATABASE_URL)';
  if (!findBinary()) return 'needs the pgbouncer binary (Debian: apt-get install pgbouncer)';
  return false;
}

/** The uid and gid of `user` from /etc/passwd: PgBouncer refuses to run as root. */
function userIds(user: string): { uid: number; gid: number } | null {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${user}:`));
  if (!line) return null;
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * The ini of docs/deployment.md for a test: every database of `server` under its own name, users
 * trusted (the test server trusts them too), transaction pooling, no ignored startup parameters.
 */
function iniFor(server: URL, port: number, dir: string, poolSize: number, poolMode: PoolMode): string {
  return [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || '5432'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${path.join(dir, 'userlist.txt')}`,
    `pool_mode = ${poolMode}`,
    `default_pool_size = ${poolSize}`,
    'max_client_conn = 1000',
    `logfile = ${path.join(dir, 'pgbouncer.log')}`,
    `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
    '',
  ].join('\n');
}

/**
 * Starts PgBouncer before `TEST_DATABASE_URL`'s server; resolves once it answers a query.
 * `poolMode`: `transaction` unless a test shows what another mode does.
 * `poolSize`: server connections per database and user (PgBouncer's `default_pool_size`).
 */
export async function startPgBouncer({
  poolSize = 20,
  poolMode = 'transaction',
}: { poolSize?: number; poolMode?: PoolMode } = {}): Promise<PgBouncer> {
  const binary = findBinary();
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (!binary || !serverUrl) throw new Error(`cannot start PgBouncer: ${pgBouncerMissing() || 'unknown'}`);
  const server = new URL(serverUrl);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'pgbouncer-'));
  const port = await freePort();
  await fs.writeFile(
    path.join(dir, 'userlist.txt'),
    `"${decodeURIComponent(server.username) || 'postgres'}" ""\n`,
  );
  await fs.writeFile(path.join(dir, 'pgbouncer.ini'), iniFor(server, port, dir, poolSize, poolMode));
  const ids = process.getuid?.() === 0 ? userIds('postgres') : null;
  if (process.getuid?.() === 0 && !ids)
    throw new Error('PgBouncer cannot run as root, and there is no postgres user');
  if (ids) {
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini'])
      await fs.chown(path.join(dir, file), ids.uid, ids.gid);
  }
  const child: ChildProcess = spawn(binary, [path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(ids ? { uid: ids.uid, gid: ids.gid } : {}),
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = new URL(serverUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const log = async () =>
    `${output}${await fs.readFile(path.join(dir, 'pgbouncer.log'), 'utf8').catch(() => '')}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await fs.rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      await client.query('SELECT 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline || child.exitCode !== null) {
        const logged = await log();
        await stop();
        throw new Error(`PgBouncer did not answer: ${String(error)}\n${logged}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return { url: url.toString(), log, stop };
}
