import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { signServiceToken } from '../../src/auth/sign-token.ts';
import type { ErrorLine } from '../../src/client/errors-file.ts';
import { loadConfig } from '../../src/config.ts';
import { spawnService, type ServiceProcess } from './process-service.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** How a command-line run ended, and what it wrote. */
export interface CliRun {
  code: number | null;
  /** The signal that ended the process, when one did (only `spawnNpmIngest` reports it). */
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A command-line client process and its output so far. */
export interface CliProcess {
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** Resolves with the exit code and the whole output once the process has exited. */
  done: Promise<CliRun>;
}

/** Starts `node --import tsx <script> …args` from the repository's root, with only PATH and `env`. */
export function spawnCli(script: string, args: string[], env: Record<string, string> = {}): CliProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = once(child, 'exit').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  return { child, stderr: () => stderr, done };
}

/**
 * Starts `npm run ingest -- …args` from the repository's root, as a person would, with only PATH, HOME
 * and `env`. `done` resolves once npm has exited and every holder of its output (the client too, should
 * it outlive npm) has closed it.
 */
export const spawnNpmIngest = (args: string[], env: Record<string, string> = {}): CliProcess =>
  spawnThroughNpm('npm', ['run', 'ingest', '--', ...args], env);

/** Starts `npx --no-install catalog-ingest …args` (the package's bin) as `spawnNpmIngest` starts npm. */
export const spawnNpxIngest = (args: string[], env: Record<string, string> = {}): CliProcess =>
  spawnThroughNpm('npx', ['--no-install', 'catalog-ingest', ...args], env);

function spawnThroughNpm(command: string, argv: string[], env: Record<string, string>): CliProcess {
  const child = spawn(command, argv, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      npm_config_update_notifier: 'false',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = once(child, 'close').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
    stdout,
    stderr,
  }));
  return { child, stderr: () => stderr, done };
}

/** The pids whose parent is `pid`, from /proc (Linux). */
export async function childPids(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await fs.readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await fs.readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // pid (comm) state ppid …; comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) children.push(Number(entry));
  }
  return children;
}

/** The command line of a running process, or null when there is none (or only its zombie). */
export async function commandLine(pid: number): Promise<string | null> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  if (status === null || /^State:\s+Z/m.test(status)) return null;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  return cmdline?.split('\0').join(' ').trim() ?? null;
}

/** Runs a command-line script to its end, `input` on its standard input; resolves with its exit code and output. */
export async function runCli(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  input = '',
): Promise<CliRun> {
  const run = spawnCli(script, args, env);
  run.child.stdin.end(input);
  return run.done;
}

/** Runs `npm run ingest`'s command to its end. */
export const ingest = (args: string[], env: Record<string, string> = {}, input = '') =>
  runCli('src/cli/ingest-file.ts', args, env, input);

/** The lines of an errors file, in file order. */
export async function readErrorLines(file: string): Promise<ErrorLine[]> {
  const text = await fs.readFile(file, 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as ErrorLine);
}

/** The service as its own process with a secret of its own, and a scratch folder, for one CLI test file. */
export interface CliService {
  url: string;
  secret: string;
  /** A scratch folder, removed by `stop`. */
  dir: string;
  /** A token for `tenant` with `scope`, signed with the service's secret. */
  token(tenant: string, scope: string): Promise<string>;
  /** Every product the tenant has, walking the cursors of GET /products. */
  allProducts(tenant: string): Promise<Array<Record<string, unknown>>>;
  /** Runs `npm run ingest`'s command on `file` for `tenant` against this service, `extra` options added. */
  ingest(file: string, tenant: string, extra?: string[]): Promise<CliRun>;
  stop(): Promise<void>;
}

/**
 * Starts the service (`env` added to its settings) for the command-line client to talk to, waiting
 * up to `startTimeoutMs` for it to answer.
 */
export async function startCliService(
  env: Record<string, string> = {},
  startTimeoutMs?: number,
): Promise<CliService> {
  const secret = randomBytes(32).toString('hex');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ingest-cli-'));
  // Two minutes to start unless told: on a machine shared by many test runs, tsx's first load of the
  // service alone has taken 50 s.
  const service: ServiceProcess = await spawnService(
    { AUTH_JWT_SECRET: secret, DATA_DIR: path.join(dir, 'data'), ...env },
    startTimeoutMs ?? 120_000,
  );
  const config = loadConfig({ AUTH_JWT_SECRET: secret });
  const token = (tenant: string, scope: string) =>
    signServiceToken(config, { tenant, scope, ttlSeconds: 600, createSecret: false });

  return {
    url: service.baseUrl,
    secret,
    dir,
    token,
    ingest: (file, tenant, extra = []) =>
      ingest([file, '--url', service.baseUrl, '--tenant', tenant, ...extra], { AUTH_JWT_SECRET: secret }),
    async allProducts(tenant) {
      const bearer = await token(tenant, 'catalog:read');
      const products = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const res = await fetch(`${service.baseUrl}/products?limit=500${query}`, {
          headers: { authorization: `Bearer ${bearer}` },
        });
        assert.equal(res.status, 200);
        const page = (await res.json()) as {
          data: Array<Record<string, unknown>>;
          next_cursor: string | null;
        };
        products.push(...page.data);
        cursor = page.next_cursor;
      } while (cursor);
      return products;
    },
    async stop() {
      // Not stopProcess: its 30 s guard timer would keep the test file's process alive that long.
      service.child.kill('SIGTERM');
      await service.exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
