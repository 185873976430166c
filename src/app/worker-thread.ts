import type { Worker } from 'node:worker_threads';
import type { Config } from '../config.ts';
import type { MetricsSnapshot } from '../observability/metrics.ts';
import { spawnThread } from '../runtime/spawn-thread.ts';
import type { Logger } from '../observability/logger.ts';

/** Messages from the API thread to the worker thread. */
export type HostMessage = { type: 'wake' } | { type: 'metrics'; id: number } | { type: 'stop' };

/** Messages from the worker thread to the API thread. */
export type ThreadMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'metrics'; id: number; metrics: MetricsSnapshot };

/** What the worker thread is started with. */
export interface ThreadData {
  config: Config;
}

/** The batch worker running in a thread of this process (ROLE=all on a PostgreSQL server). */
export interface WorkerThread {
  /** Tells the thread's idle polling loops that a batch was just submitted. */
  wake(): void;
  /** The thread's metrics; the last ones it sent if it does not answer within a second. */
  metrics(): Promise<MetricsSnapshot | null>;
  /** Lets the thread hand back or finish its batches (as a worker process does on SIGTERM) and ends it. */
  stop(timeoutMs: number): Promise<void>;
}

const RESTART_DELAY_MS = 1_000;
/**
 * How long a thread told to stop while it starts may take to end by itself before it is ended:
 * as long as a running thread's stop may take (the worker's 8 s and 2 s more), so that a start
 * that hangs (a database that does not answer) cannot hold the drain for ever.
 */
const DRAINED_START_LIMIT_MS = 10_000;

/**
 * Starts the worker role in its own thread, with its own connections, queue polling and event loop,
 * so that parsing, validating and merging batches runs beside the API instead of between its
 * requests. Resolves once the thread's worker has started. A thread that dies is started again.
 *
 * `drain`, aborted by a signal to the process, is passed on to the thread at once, also while it
 * starts: a thread still loading its modules then ends without opening anything, and one whose
 * service is starting stops once started, with no worker if the drain came before its worker side
 * (else the worker hands its jobs back, as on any stop). Either way the start resolves, and the
 * drain's clock runs from the signal, not from the end of the thread's start.
 */
export async function startWorkerThread(
  config: Config,
  log: Logger,
  drain?: AbortSignal,
): Promise<WorkerThread> {
  const data: ThreadData = {
    config: { ...config, role: 'worker', worker: { ...config.worker, thread: false } },
  };
  const pending = new Map<number, (metrics: MetricsSnapshot) => void>();
  let nextId = 1;
  let stopping = false;
  /** The last metrics the thread sent: served when it is slow to answer, being restarted, or ended. */
  let lastMetrics: MetricsSnapshot | null = null;
  /** Set once a stopped thread has ended: a scrape during the rest of the drain gets its last metrics at once. */
  let ended = false;

  const askToStop = (thread: Worker) => thread.postMessage({ type: 'stop' } satisfies HostMessage);
  /** Tells the thread last spawned to stop as soon as a drain is asked for, ready or not. */
  let stopSpawned: (() => void) | null = null;
  const stopOnDrain = () => {
    stopping = true;
    stopSpawned?.();
  };
  if (drain?.aborted) stopping = true;
  else drain?.addEventListener('abort', stopOnDrain, { once: true });

  /**
   * Starts a thread; resolves once its worker runs, with a promise of its exit, or with null when
   * a drain ended the thread before it was ready (a start that a drain cut short is no failure).
   */
  const start = (): Promise<{ thread: Worker; exited: Promise<void> } | null> =>
    new Promise((resolve, reject) => {
      const thread = spawnThread(new URL('./worker-thread.entry.ts', import.meta.url), data);
      let started = false;
      let cut: NodeJS.Timeout | undefined;
      stopSpawned = () => {
        askToStop(thread);
        if (!started) cut ??= setTimeout(() => void thread.terminate(), DRAINED_START_LIMIT_MS);
      };
      if (stopping) stopSpawned();
      const exited = new Promise<void>((done) => thread.once('exit', () => done()));
      thread.on('message', (message: ThreadMessage) => {
        switch (message.type) {
          case 'ready':
            started = true;
            clearTimeout(cut);
            resolve({ thread, exited });
            break;
          case 'failed':
            if (stopping)
              log.warn({ reason: message.message }, 'the worker thread failed while a drain stopped it');
            else reject(new Error(`the worker thread failed to start: ${message.message}`));
            break;
          case 'metrics':
            lastMetrics = message.metrics;
            pending.get(message.id)?.(message.metrics);
            pending.delete(message.id);
            break;
        }
      });
      thread.on('error', (error) => {
        if (!started && !stopping) reject(error);
        else log.error({ err: error }, 'the worker thread crashed');
      });
      thread.on('exit', (code) => {
        clearTimeout(cut);
        if (!started && stopping) resolve(null);
        else if (!started) reject(new Error(`the worker thread exited with ${code} while starting`));
        else if (!stopping) restart(code);
      });
    });

  /** The running thread, or the start of its replacement after a crash. */
  let current: Promise<{ thread: Worker; exited: Promise<void> } | null> = start();
  await current;

  function restart(code: number): void {
    log.error({ code }, 'the worker thread exited; starting it again');
    current = new Promise((resolve) => setTimeout(resolve, RESTART_DELAY_MS)).then(() =>
      stopping
        ? null
        : start().catch((error: unknown) => {
            log.error({ err: error }, 'the worker thread could not be started again');
            if (!stopping) restart(1);
            return null;
          }),
    );
  }

  const post = (message: HostMessage) => void current.then((running) => running?.thread.postMessage(message));

  return {
    wake: () => post({ type: 'wake' }),
    metrics() {
      if (ended) return Promise.resolve(lastMetrics);
      const id = nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(lastMetrics);
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
      drain?.removeEventListener('abort', stopOnDrain);
      // A replacement still starting is waited for, then stopped like the thread it replaces.
      const running = await current;
      if (!running) {
        ended = true;
        return;
      }
      askToStop(running.thread);
      const timer = setTimeout(() => void running.thread.terminate(), timeoutMs + 2_000);
      await running.exited;
      clearTimeout(timer);
      ended = true;
    },
  };
}
