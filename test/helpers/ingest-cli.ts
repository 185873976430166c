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
  stop(): Promise<void>;
}

/** Starts the service (`env` added to its settings) for the command-line client to talk to. */
export async function startCliService(env: Record<string, string> = {}): Promise<CliService> {
  const secret = randomBytes(32).toString('hex');
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ingest-cli-'));
  // Two minutes to start: on a machine shared by many test runs, tsx's first load of the service
  // alone has taken 50 s.
  const service: ServiceProcess = await spawnService(
    { AUTH_JWT_SECRET: secret, DATA_DIR: path.join(dir, 'data'), ...env },
    120_000,
  );
  const config = loadConfig({ AUTH_JWT_SECRET: secret });
  const token = (tenant: string, scope: string) =>
    signServiceToken(config, { tenant, scope, ttlSeconds: 600, createSecret: false });

  return {
    url: service.baseUrl,
    secret,
    dir,
    token,
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
