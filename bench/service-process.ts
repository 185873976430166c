import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The service started as its own process, as `npm start` runs it. */
export interface ServiceProcess {
  baseUrl: string;
  secret: string;
  pid: number;
  /** What was run, e.g. `node dist/main.js` or `node --trace-gc dist/main.js`. */
  command: string;
  /** Peak resident set size so far (VmHWM), in MiB. */
  peakRssMiB(): number;
  /** Resident set size now (VmRSS), in MiB. */
  rssMiB(): number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A memory figure of a running process from /proc (VmHWM: peak RSS, VmRSS: now), in MiB. */
export function readStatusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

let built = false;

/** Compiles the service to dist/ once per bench run, as `npm start` does before it starts. */
function buildOnce(): void {
  if (built) return;
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { stdio: 'inherit' });
  built = true;
}

/**
 * The Node.js options that `npm start` gives the service (package.json's `start` script, `exec node
 * <options> dist/main.js`), so that the bench measures the process a deployment runs.
 */
export function startScriptNodeArgs(): string[] {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  const words = pkg.scripts.start.trim().split(/\s+/);
  if (words[0] !== 'exec' || words[1] !== 'node' || words.at(-1) !== 'dist/main.js') {
    throw new Error(
      `package.json's start script is not "exec node [options] dist/main.js": ${pkg.scripts.start}`,
    );
  }
  return words.slice(2, -1);
}

/**
 * Starts the compiled service (`dist/main.js`, built from src/ first) with `env` on a free port,
 * under the options of `npm start` followed by `nodeArgs` (e.g. V8 flags to compare; for a V8 flag
 * given twice the later wins), and waits until `/readyz` says ready.
 */
export async function startServiceProcess(
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<ServiceProcess> {
  buildOnce();
  const port = await freePort();
  const secret = randomBytes(32).toString('hex');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-data-'));
  const args = [...startScriptNodeArgs(), ...nodeArgs, 'dist/main.js'];
  const child: ChildProcess = spawn(process.execPath, args, {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      AUTH_JWT_SECRET: secret,
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000',
      MAX_PENDING_ITEMS: '100000000',
      ...env,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  // A bench that fails or exits must not leave its service running (with its port and, on a server,
  // its schema's connections). Node emits 'exit' on a throw or process.exit, not when the bench is
  // killed by a signal; Ctrl-C reaches the child anyway, as it signals the whole process group.
  const killChild = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  process.once('exit', killChild);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}`);
      try {
        if ((await fetch(`${baseUrl}/readyz`)).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error('service did not start within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    killChild();
    process.removeListener('exit', killChild);
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    baseUrl,
    secret,
    pid: child.pid!,
    command: ['node', ...args].join(' '),
    peakRssMiB: () => readStatusMiB(child.pid!, 'VmHWM'),
    rssMiB: () => readStatusMiB(child.pid!, 'VmRSS'),
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      process.removeListener('exit', killChild);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
