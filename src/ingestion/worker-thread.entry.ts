import { parentPort, workerData } from 'node:worker_threads';
import { pino } from 'pino';
import { startService } from '../server.ts';
import type { HostMessage, ThreadData, ThreadMessage } from './worker-thread.ts';

/** The worker thread of ROLE=all on a PostgreSQL server: the worker role, driven by messages. */

const port = parentPort!;
const { config, logLevel } = workerData as ThreadData;
const send = (message: ThreadMessage) => port.postMessage(message);

try {
  const service = await startService(config, {
    logger: pino({ level: logLevel }).child({ thread: 'worker' }),
    listen: false,
  });
  port.on('message', (message: HostMessage) => {
    switch (message.type) {
      case 'wake':
        service.queue.nudge();
        break;
      case 'metrics':
        void service.metrics.registry
          .getMetricsAsJSON()
          .then((metrics) => send({ type: 'metrics', id: message.id, metrics }));
        break;
      case 'stop':
        void service.stop().finally(() => {
          send({ type: 'stopped' });
          port.close();
        });
        break;
    }
  });
  send({ type: 'ready' });
} catch (error) {
  send({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  port.close();
}
