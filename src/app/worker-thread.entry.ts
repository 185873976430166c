import { parentPort, workerData } from 'node:worker_threads';
import os from 'node:os';
import { pino } from 'pino';
import type { Service } from './start-service.ts';
import type { HostMessage, ThreadData, ThreadMessage } from './worker-thread.ts';

/** The worker thread of ROLE=all on a PostgreSQL server: the worker role, driven by messages. */

const port = parentPort!;
const { config } = workerData as ThreadData;
const send = (message: ThreadMessage) => port.postMessage(message);

const log = pino({ level: config.logLevel }).child({ thread: 'worker' });
// Batches are throughput work and requests latency work: on Linux a thread has its own nice value,
// so lowering this thread's lets the API thread run first whenever both want a core, at no cost to
// ingestion throughput (docs/performance.md).
// Elsewhere the call would lower the whole process, API included, so it is made on Linux only.
if (process.platform === 'linux') {
  try {
    os.setPriority(os.constants.priority.PRIORITY_BELOW_NORMAL);
  } catch (error) {
    log.warn({ err: error }, 'could not lower the worker thread priority');
  }
}

/**
 * Aborted by the host's `stop`: a start under way then starts no worker if it has not reached its
 * worker side yet, and the service stops once started.
 */
const drain = new AbortController();
let service: Service | null = null;
let serviceStarting = false;
let stopping: Promise<void> | null = null;

/** Stops the started service once, then lets the thread end. */
const stopService = (started: Service) =>
  (stopping ??= started
    .stop()
    .catch((error: unknown) => log.error({ err: error }, 'unclean stop of the worker thread'))
    .finally(() => port.close()));

// Listening before the service's modules load (a second or more from sources, longer on a busy
// machine): a drain asked for meanwhile must not wait for a start it is about to undo.
port.on('message', (message: HostMessage) => {
  switch (message.type) {
    case 'wake':
      service?.queue.wake();
      break;
    case 'metrics':
      service?.metrics.registry.getMetricsAsJSON().then(
        (metrics) => send({ type: 'metrics', id: message.id, metrics }),
        (error: unknown) => log.warn({ err: error }, 'could not collect metrics'),
      );
      break;
    case 'stop':
      drain.abort();
      if (service) void stopService(service);
      // Nothing is open yet (no connection, no job claimed): the thread can simply end, once its
      // log (asynchronous in a thread, and not flushed by an exit there) is written.
      else if (!serviceStarting) log.flush(() => process.exit(0));
      break;
  }
});

try {
  const { startService } = await import('./start-service.ts');
  serviceStarting = true;
  service = await startService(config, { logger: log, listen: false, drain: drain.signal });
  send({ type: 'ready' });
  if (drain.signal.aborted) await stopService(service);
} catch (error) {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  port.close();
}
