import type { Worker } from 'node:worker_threads';
import type { Config } from '../config.ts';
import type { MetricsSnapshot } from '../observability/metrics.ts';
import { spawnThread } from '../runtime/spawn-thread.ts';
import type { Logger } from './batch-worker.ts';

/** Messages from the API thread to the worker thread. */
export type HostMessage = { type: 'wake' } | { type: 'metrics'; id: number } | { type: 'stop' };

/** Messages from the worker thread to the API thread. */
export type ThreadMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'metrics'; id: number; metrics: MetricsSnapshot }
  | { type: 'stopped' };

/** What the worker thread is started with. */
export interface ThreadData {
  config: Config;
  logLevel: string;
}

/** The batch worker running in a thread of this process (ROLE=all on a PostgreSQL server). */
export interface WorkerThread {
  /** Tells the thread's idle polling loops that a batch was just submitted. */
  wake(): void;
  /** The thread's metrics; null if it does not answer within a second. */
  metrics(): Promise<MetricsSnapshot | null>;
  /** Lets the thread hand back or finish its batches (as a worker process does on SIGTERM) and ends it. */
  stop(timeoutMs: number): Promise<void>;
}

const RESTART_DELAY_MS = 1_000;

/**
 * Starts the worker role in its own thread, with its own connections, queue polling and event loop,
 * so that parsing, validating and merging batches runs beside the API instead of between its
 * requests. Resolves once the thread's worker has started. A thread that dies is started again.
 */
export async function startWorkerThread(config: Config, log: Logger): Promise<WorkerThread> {
  const data: ThreadData = {
    config: { ...config, role: 'worker', worker: { ...config.worker, thread: false } },
    logLevel: process.env.LOG_LEVEL ?? 'info',
  };
  const pending = new Map<number, (metrics: MetricsSnapshot | null) => void>();
  let nextId = 1;
  let stopping = false;

  const start = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const thread = spawnThread(new URL('./worker-thread.entry.ts', import.meta.url), data);
      let started = false;
      thread.on('message', (message: ThreadMessage) => {
        switch (message.type) {
          case 'ready':
            started = true;
            resolve(thread);
            break;
          case 'failed':
            reject(new Error(`the worker thread failed to start: ${message.message}`));
            break;
          case 'metrics':
            pending.get(message.id)?.(message.metrics);
            pending.delete(message.id);
            break;
          case 'stopped':
            break;
        }
      });
      thread.on('error', (error) => {
        if (!started) reject(error);
        else log.error({ err: error }, 'the worker thread crashed');
      });
      thread.on('exit', (code) => {
        if (!started) reject(new Error(`the worker thread exited with ${code} while starting`));
        else if (!stopping) restart(code);
      });
    });

  let current = await start();

  function restart(code: number): void {
    log.error({ code }, 'the worker thread exited; starting it again');
    setTimeout(() => {
      if (stopping) return;
      start().then(
        (thread) => {
          current = thread;
        },
        (error: unknown) => {
          log.error({ err: error }, 'the worker thread could not be started again');
          restart(1);
        },
      );
    }, RESTART_DELAY_MS).unref();
  }

  const post = (message: HostMessage) => current.postMessage(message);

  return {
    wake: () => post({ type: 'wake' }),
    metrics() {
      const id = nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(null);
        }, 1_000);
        pending.set(id, (metrics) => {
          clearTimeout(timer);
          resolve(metrics);
        });
        post({ type: 'metrics', id });
      });
    },
    async stop(timeoutMs) {
      stopping = true;
      const exited = new Promise((resolve) => current.once('exit', resolve));
      post({ type: 'stop' });
      const timer = setTimeout(() => void current.terminate(), timeoutMs + 2_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
