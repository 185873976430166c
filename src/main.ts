import { pino } from 'pino';
import { ConfigError, loadConfig } from './config.ts';
import { startService } from './server.ts';
import { DataDirInUseError } from './db/embedded-database.ts';

const log = pino({ level: process.env.LOG_LEVEL ?? 'info' });

try {
  const config = loadConfig();
  const service = await startService(config, { logger: log });
  log.info(
    { role: config.role, port: config.port, host: config.host, database: service.db.kind },
    'service started',
  );

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    service.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  if (error instanceof ConfigError || error instanceof DataDirInUseError) {
    log.fatal(error.message);
  } else {
    log.fatal({ err: error }, 'service failed to start');
  }
  process.exit(1);
}
