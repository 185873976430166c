import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../test/helpers/process-service.ts';
import { asServerUser, binDir, type PrivatePostgres } from './private-postgres.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The standby's name, in its `primary_conninfo` and the primary's `synchronous_standby_names`. */
const STANDBY_NAME = 'standby1';

/** What a failover took, in ms from the moment the primary was stopped. */
export interface FailoverTimes {
  /** `pg_ctl promote -w` returned: the standby takes writes. */
  promotedMs: number;
  /** PgBouncer was repointed (`RELOAD`, `RECONNECT`) and a query through it met a primary. */
  repointedMs: number;
  /** WAL the standby had not replayed just before the stop, in bytes (async: what may be lost). */
  replayLagBytes: number;
  /** How long the standby's WAL receiver was stopped before the primary was. */
  stallMs: number;
}

/**
 * A primary and a streaming standby made from it with `pg_basebackup -R`, each in a temporary
 * directory on a free loopback port, behind a PgBouncer in transaction pooling mode: `url` is
 * PgBouncer's, which follows the primary. `synchronous` sets the primary's
 * `synchronous_standby_names` to the standby (a commit waits for the standby's flush); otherwise it
 * is empty (asynchronous replication). Restarts and terminated backends hit the current primary.
 */
export interface StandbyPair extends PrivatePostgres {
  synchronous: boolean;
  /** The primary itself, not through PgBouncer (until a failover stops it). */
  primaryUrl: string;
  /** The standby itself: a hot standby that serves reads (a read replica) until promoted. */
  standbyUrl: string;
  /**
   * Stops the primary hard (`pg_ctl stop -m immediate`), promotes the standby (`pg_ctl promote`),
   * rewrites PgBouncer's ini to the standby's port and sends `RELOAD` and `RECONNECT` on its admin
   * console. The service keeps its URL (PgBouncer's). Once only.
   *
   * `stallMs` first stops the standby's WAL receiver (SIGSTOP) for that long while the load goes
   * on, as a standby that has fallen behind: with synchronous replication commits wait for it;
   * with asynchronous replication they do not, and what they wrote is lost by the promotion.
   */
  failover(stallMs?: number): Promise<FailoverTimes>;
}

interface Node {
  data: string;
  port: number;
  log: string;
}

/** The ini of docs/deployment.md ("Pooled through PgBouncer"), with the database pointed at `port`. */
function bouncerIni(dir: string, listen: number, serverPort: number, loginRetry: number): string {
  return [
    '[databases]',
    `postgres = host=127.0.0.1 port=${serverPort} dbname=postgres`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${listen}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${dir}/userlist.txt`,
    'admin_users = postgres',
    'pool_mode = transaction',
    'default_pool_size = 60',
    'max_client_conn = 1000',
    // A login to a server that is down is retried after 1 s, not the default 15 s.
    `server_login_retry = ${loginRetry}`,
    `logfile = ${dir}/pgbouncer.log`,
    '',
  ].join('\n');
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates and starts the pair and its PgBouncer; `destroy()` it in a `finally`. */
export async function startStandbyPair(options: {
  synchronous: boolean;
  /** PgBouncer's `server_login_retry`, in seconds (1; PgBouncer's default is 15). */
  serverLoginRetry?: number;
}): Promise<StandbyPair> {
  const bin = binDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reliability-pair-'));
  if (process.getuid?.() === 0) await asRoot('chown', ['postgres', dir]);
  const primary: Node = {
    data: path.join(dir, 'primary'),
    port: await freePort(),
    log: `${dir}/primary.log`,
  };
  const standby: Node = {
    data: path.join(dir, 'standby'),
    port: await freePort(),
    log: `${dir}/standby.log`,
  };
  const bouncerPort = await freePort();
  const pgCtl = (node: Node, action: string, ...extra: string[]) =>
    asServerUser(path.join(bin, 'pg_ctl'), [action, '-D', node.data, '-w', '-t', '60', ...extra]);
  const serverOptions = (node: Node, extra: string[] = []) =>
    [
      `-p ${node.port}`,
      `-k ${dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c max_connections=200',
      '-c fsync=off',
      '-c wal_level=replica',
      '-c max_wal_senders=5',
      ...extra,
    ].join(' ');
  const urlOf = (port: number, db = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${db}`;
  let current = primary;
  let bouncer: ChildProcess | null = null;
  let destroyed = false;
  const destroy = async () => {
    if (destroyed) return;
    destroyed = true;
    if (bouncer && bouncer.exitCode === null) {
      const exited = new Promise((resolve) => bouncer!.once('exit', resolve));
      bouncer.kill('SIGTERM');
      await Promise.race([exited, sleep(5_000)]);
      if (bouncer.exitCode === null) bouncer.kill('SIGKILL');
    }
    for (const node of [primary, standby])
      await pgCtl(node, 'stop', '-m', 'immediate').catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const writeIni = (serverPort: number) => {
    fs.writeFileSync(
      path.join(dir, 'pgbouncer.ini'),
      bouncerIni(dir, bouncerPort, serverPort, options.serverLoginRetry ?? 1),
    );
  };
  try {
    await asServerUser(path.join(bin, 'initdb'), [
      '-D',
      primary.data,
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
    ]);
    // initdb's pg_hba.conf already lets loopback replication in with trust; said once more, on purpose.
    fs.appendFileSync(
      path.join(primary.data, 'pg_hba.conf'),
      'host replication postgres 127.0.0.1/32 trust\n',
    );
    const sync = options.synchronous ? STANDBY_NAME : '';
    await pgCtl(
      primary,
      'start',
      '-l',
      primary.log,
      '-o',
      serverOptions(primary, [`-c synchronous_standby_names=${sync}`]),
    );
    await asServerUser(path.join(bin, 'pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(primary.port),
      '-U',
      'postgres',
      '-D',
      standby.data,
      '-X',
      'stream',
      '-c',
      'fast',
      '-R',
    ]);
    // -R wrote standby.signal and a primary_conninfo; this one names the standby, which is what
    // synchronous_standby_names matches (application_name), and wins as the last line.
    const conninfo = `host=127.0.0.1 port=${primary.port} user=postgres application_name=${STANDBY_NAME}`;
    fs.appendFileSync(path.join(standby.data, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo}'\n`);
    // The standby runs without synchronous_standby_names: promoted, it has no standby to wait for.
    await pgCtl(standby, 'start', '-l', standby.log, '-o', serverOptions(standby));
    const want = options.synchronous ? 'sync' : 'async';
    for (let tries = 0; ; tries++) {
      const rows = await query<{ sync_state: string; state: string }>(
        urlOf(primary.port),
        `SELECT sync_state, state FROM pg_stat_replication WHERE application_name = '${STANDBY_NAME}'`,
      );
      if (rows[0]?.state === 'streaming' && rows[0].sync_state === want) break;
      if (tries > 100) throw new Error(`the standby is not streaming (${want}): ${JSON.stringify(rows)}`);
      await sleep(200);
    }
    writeIni(primary.port);
    fs.writeFileSync(path.join(dir, 'userlist.txt'), '"postgres" ""\n');
    if (process.getuid?.() === 0)
      await asRoot('chown', [
        '-R',
        'postgres',
        path.join(dir, 'pgbouncer.ini'),
        path.join(dir, 'userlist.txt'),
      ]);
    const bouncerBin = fs.existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : 'pgbouncer';
    // PgBouncer refuses to run as root.
    const asUser = process.getuid?.() === 0 ? ['-u', 'postgres'] : [];
    bouncer = spawn(bouncerBin, [...asUser, path.join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
    for (let tries = 0; ; tries++) {
      try {
        await query(urlOf(bouncerPort), 'SELECT 1');
        break;
      } catch (error) {
        if (tries > 50 || bouncer.exitCode !== null) {
          const log = fs.existsSync(`${dir}/pgbouncer.log`)
            ? fs.readFileSync(`${dir}/pgbouncer.log`, 'utf8')
            : '';
          throw new Error(`PgBouncer did not answer: ${(error as Error).message}\n${log}`);
        }
        await sleep(200);
      }
    }
  } catch (error) {
    await destroy();
    throw error;
  }
  let failedOver = false;
  return {
    url: urlOf(bouncerPort),
    port: bouncerPort,
    primaryUrl: urlOf(primary.port),
    standbyUrl: urlOf(standby.port),
    synchronous: options.synchronous,
    async restart() {
      await pgCtl(current, 'restart', '-m', 'fast', '-l', current.log);
    },
    async terminateBackends() {
      const rows = await query<{ ended: boolean }>(
        urlOf(current.port),
        `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`,
      );
      return rows.filter((row) => row.ended).length;
    },
    async failover(stallMs = 0) {
      if (failedOver) throw new Error('the pair has failed over already');
      failedOver = true;
      let sender = 0;
      if (stallMs > 0) {
        const [row] = await query<{ pid: number }>(
          urlOf(primary.port),
          `SELECT pid FROM pg_stat_replication WHERE application_name = '${STANDBY_NAME}'`,
        );
        if (!row) throw new Error('the primary has no WAL sender');
        sender = row.pid;
        process.kill(sender, 'SIGSTOP');
        await sleep(stallMs);
      }
      const lag = await query<{ bytes: string | null }>(
        urlOf(primary.port),
        `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint::text AS bytes
           FROM pg_stat_replication WHERE application_name = '${STANDBY_NAME}'`,
      ).catch(() => []);
      const start = Date.now();
      if (sender) {
        // A stopped sender would hold the immediate stop up (until the postmaster's SIGKILL, 5 s
        // later): it is killed as the stop begins, and the stop awaited by the pid file's removal.
        await pgCtl(primary, 'stop', '-m', 'immediate', '-W');
        process.kill(sender, 'SIGKILL');
        for (let tries = 0; fs.existsSync(path.join(primary.data, 'postmaster.pid')); tries++) {
          if (tries > 300) throw new Error('the primary does not stop');
          await sleep(100);
        }
      } else {
        await pgCtl(primary, 'stop', '-m', 'immediate');
      }
      await pgCtl(standby, 'promote');
      const promotedMs = Date.now() - start;
      current = standby;
      writeIni(standby.port);
      const admin = new pg.Client({ connectionString: urlOf(bouncerPort, 'pgbouncer') });
      await admin.connect();
      try {
        // RELOAD reads the new port; RECONNECT closes the server connections still open to the old
        // primary as they are released (there are none left after an immediate stop, but a
        // switchover to a live primary would have some).
        await admin.query('RELOAD');
        await admin.query('RECONNECT');
      } finally {
        await admin.end().catch(() => undefined);
      }
      for (let tries = 0; ; tries++) {
        try {
          const [row] = await query<{ standby: boolean }>(
            urlOf(bouncerPort),
            'SELECT pg_is_in_recovery() AS standby',
          );
          if (row && !row.standby) break;
        } catch {
          // Not yet.
        }
        if (tries > 150) throw new Error('PgBouncer does not reach the promoted standby');
        await sleep(200);
      }
      return {
        promotedMs,
        repointedMs: Date.now() - start,
        replayLagBytes: Number(lag[0]?.bytes ?? 0),
        stallMs,
      };
    },
    destroy,
  };
}

async function asRoot(command: string, args: string[]): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}`))));
  });
}
