import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { startService, type Service } from './app/start-service.ts';
import { DataDirInUseError } from './db/embedded-database.ts';
import { DeploymentError } from './db/deployment-check.ts';

// At `info` until the configuration is read: a setting that cannot be used is logged whatever LOG_LEVEL says.
const log = pino({ level: 'info' });

let service: Service | undefined;
let stopping = false;
/** Aborted by a signal that arrives while the service starts: the start then drains as it goes. */
const drainWhileStarting = new AbortController();

/** Drains the started service and exits: 0 when it stopped cleanly, 1 when it did not. */
function stopAndExit(started: Service): void {
  started.stop().then(
    () => {
      // The log's last line says the drain ended cleanly (pino writes stdout synchronously).
      log.info('stopped');
      process.exit(0);
    },
    (error: unknown) => {
      log.error({ err: error }, 'unclean shutdown');
      process.exit(1);
    },
  );
}

// Installed before the start: the API listens before the worker has started, so a supervisor may
// already see it ready, and a signal then must drain it, not kill it outright. The drain's clock
// starts at the signal: the API stops taking requests at once, and the rest stops once started.
const shutdown = (signal: string) => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'draining');
  if (service) stopAndExit(service);
  else drainWhileStarting.abort();
};
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

try {
  const config = loadConfig();
  log.level = config.logLevel;
  service = await startService(config, { logger: log, drain: drainWhileStarting.signal });
  log.info(
    { role: config.role, port: config.port, host: config.host, database: service.db.kind },
    'service started',
  );
  if (stopping) stopAndExit(service);
} catch (error) {
  if (
    error instanceof ConfigError ||
    error instanceof DataDirInUseError ||
    error instanceof DeploymentError
  ) {
    log.fatal(error.message);
  } else {
    log.fatal({ err: error }, 'service failed to start');
  }
  process.exit(1);
}
