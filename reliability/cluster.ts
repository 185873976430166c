import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readStatusMiB, startScriptNodeArgs } from '../bench/service-process.ts';
import { freePort, spawnService, stopProcess, type ServiceProcess } from '../test/helpers/process-service.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One service process of a cluster; `proc` is null while it is down. */
export interface Member {
  name: string;
  role: 'api' | 'worker';
  port: number;
  baseUrl: string;
  proc: ServiceProcess | null;
}

/** API and worker processes on one PostgreSQL server, each restartable on its own port. */
export interface Cluster {
  secret: string;
  apis: Member[];
  workers: Member[];
  members(): Member[];
  /** SIGKILLs the member (no drain) and waits for the exit. */
  kill(member: Member): Promise<void>;
  /** Starts the member on its port and waits until `/readyz` answers 200. */
  start(member: Member): Promise<void>;
  /** True when `/readyz` answers 200 within 2 s. */
  ready(member: Member): Promise<boolean>;
  /** Peak resident set size (VmHWM) of each running member, in MiB, by name. */
  peakRss(): Record<string, number>;
  /** Drains every running member (SIGTERM, then SIGKILL after 20 s). */
  stop(): Promise<void>;
  /** Writes what every process (the killed ones too) wrote to stdout and stderr into `dir`. */
  saveLogs(dir: string): void;
}

/** Compiles src/ to dist/ when the sources changed, as `npm start` does. */
export function buildService(): void {
  execFileSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * Starts `apis` ROLE=api and `workers` ROLE=worker processes of the compiled service
 * (`dist/main.js` under `npm start`'s Node.js options) on `databaseUrl`, all at once, and waits
 * until each is ready. `env` is added to every process's environment.
 */
export async function startCluster(options: {
  databaseUrl: string;
  apis: number;
  workers: number;
  env?: Record<string, string>;
}): Promise<Cluster> {
  buildService();
  const secret = randomBytes(32).toString('hex');
  const logs = new Map<string, string[]>();
  const remember = (m: Member) => {
    if (m.proc) logs.set(m.name, [...(logs.get(m.name) ?? []), m.proc.output()]);
  };
  const member = async (role: Member['role'], index: number): Promise<Member> => {
    const port = await freePort();
    return { name: `${role}-${index + 1}`, role, port, baseUrl: `http://127.0.0.1:${port}`, proc: null };
  };
  const apis = await Promise.all(Array.from({ length: options.apis }, (_, i) => member('api', i)));
  const workers = await Promise.all(Array.from({ length: options.workers }, (_, i) => member('worker', i)));
  const envOf = (m: Member): Record<string, string> => ({
    DATABASE_URL: options.databaseUrl,
    AUTH_JWT_SECRET: secret,
    NODE_ENV: 'production',
    ROLE: m.role,
    PORT: String(m.port),
    ANALYSIS_ENABLED: 'false',
    ...options.env,
  });

  const ready = async (m: Member) => {
    try {
      const res = await fetch(`${m.baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  };
  const start = async (m: Member) => {
    m.proc = await spawnService(envOf(m), 90_000, [...startScriptNodeArgs(), 'dist/main.js']);
    const deadline = Date.now() + 90_000;
    while (!(await ready(m))) {
      if (!m.proc.alive()) throw new Error(`${m.name} exited while starting:\n${m.proc.output()}`);
      if (Date.now() > deadline) throw new Error(`${m.name} not ready within 90 s:\n${m.proc.output()}`);
      await sleep(200);
    }
  };
  const cluster: Cluster = {
    secret,
    apis,
    workers,
    members: () => [...apis, ...workers],
    async kill(m) {
      if (!m.proc) return;
      if (m.proc.alive()) {
        m.proc.child.kill('SIGKILL');
        await m.proc.exited;
      }
      remember(m);
      m.proc = null;
    },
    start,
    ready,
    peakRss() {
      const peaks: Record<string, number> = {};
      for (const m of cluster.members()) {
        if (m.proc?.alive()) peaks[m.name] = Math.round(readStatusMiB(m.proc.child.pid!, 'VmHWM'));
      }
      return peaks;
    },
    saveLogs(dir) {
      fs.mkdirSync(dir, { recursive: true });
      for (const m of cluster.members()) {
        const runs = [...(logs.get(m.name) ?? []), ...(m.proc ? [m.proc.output()] : [])];
        fs.writeFileSync(path.join(dir, `${m.name}.log`), runs.join('\n--- restarted ---\n'));
      }
    },
    async stop() {
      await Promise.all(
        cluster.members().map(async (m) => {
          if (!m.proc) return;
          await stopProcess(m.proc, 'SIGTERM', 20_000).catch(() => undefined);
          remember(m);
          m.proc = null;
        }),
      );
    },
  };
  try {
    await Promise.all(cluster.members().map(start));
  } catch (error) {
    await Promise.all(cluster.members().map((m) => cluster.kill(m)));
    throw error;
  }
  return cluster;
}
