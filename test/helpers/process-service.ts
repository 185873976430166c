import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { signServiceToken } from '../../src/auth/sign-token.ts';
import { loadConfig } from '../../src/config.ts';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How a service process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The service running as its own process (by default its sources under tsx: `src/main.ts`). */
export interface ServiceProcess {
  child: ChildProcess;
  baseUrl: string;
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** What the process wrote to stdout and stderr, for failure messages. */
  output(): string;
  alive(): boolean;
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Signs a token with all scopes for `tenant` with `secret` (HS256). */
export async function signToken(secret: string, tenant: string): Promise<string> {
  return signServiceToken(loadConfig({ AUTH_JWT_SECRET: secret }), {
    tenant,
    scope: ALL_SCOPES,
    ttlSeconds: 3600,
    createSecret: false,
  });
}

/**
 * Spawns the service with `env` (plus PATH and HOME only, so nothing of the test's own environment
 * leaks in) on `env.PORT` or else a free port, and waits until `GET /healthz` answers 200. `entry`
 * is what Node runs: the sources under tsx, or a compiled `main.js`.
 */
export async function spawnService(
  env: Record<string, string>,
  startTimeoutMs = 60_000,
  entry: readonly string[] = ['--import', 'tsx', 'src/main.ts'],
): Promise<ServiceProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [...entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let running = true;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      running = false;
      resolve({ code, signal });
    });
  });
  const proc: ServiceProcess = {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    exited,
    output: () => output,
    alive: () => running,
  };
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (!running) throw new Error(`service exited during start:\n${output}`);
    try {
      const res = await fetch(`${proc.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return proc;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not healthy within ${startTimeoutMs} ms:\n${output}`);
    }
    await sleep(100);
  }
}

/** Sends `signal` and waits for the exit, at most `timeoutMs` (then SIGKILL and throw). */
export async function stopProcess(
  proc: ServiceProcess,
  signal: NodeJS.Signals,
  timeoutMs: number,
): Promise<Exit> {
  if (!proc.alive()) return proc.exited;
  proc.child.kill(signal);
  const timer = sleep(timeoutMs).then(() => 'timeout' as const);
  const result = await Promise.race([proc.exited, timer]);
  if (result === 'timeout') {
    proc.child.kill('SIGKILL');
    await proc.exited;
    throw new Error(`service did not exit within ${timeoutMs} ms of ${signal}:\n${proc.output()}`);
  }
  return result;
}

/** A unique lower-case schema name for one test file's processes on a shared server. */
export const uniqueSchema = (prefix: string) => `${prefix}_${randomBytes(6).toString('hex')}`;

/** Sends a JSON request with `token` to a service process; answers its status and parsed body. */
export async function callService<J = unknown>(
  proc: ServiceProcess,
  token: string,
  method: 'GET' | 'POST',
  url: string,
  body?: unknown,
): Promise<{ status: number; json: J }> {
  const res = await fetch(`${proc.baseUrl}${url}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, json: (await res.json()) as J };
}

/** Kills (SIGKILL) every process of `spawned` still alive and waits for each to end: a file's cleanup. */
export async function killAll(spawned: ServiceProcess[]): Promise<void> {
  for (const proc of spawned) {
    if (proc.alive()) {
      proc.child.kill('SIGKILL');
      await proc.exited;
    }
  }
}
