import { pino } from 'pino';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startService } from '../../src/app/start-service.ts';

/**
 * Run as a child process by the tests: calls `startService` with the configuration of this process's
 * environment (in-memory database) and prints the outcome as one JSON line. A child, because a start
 * that fails part-way may leave handles open that would keep a test file from ending.
 */
try {
  const service = await startService(loadConfig(), {
    listen: false,
    dataDir: null,
    logger: pino({ level: 'silent' }),
  });
  process.stdout.write(`${JSON.stringify({ started: true })}\n`);
  await service.stop();
} catch (error) {
  const outcome = {
    started: false,
    configError: error instanceof ConfigError,
    message: error instanceof Error ? error.message : String(error),
  };
  process.stdout.write(`${JSON.stringify(outcome)}\n`);
}
process.exit(0);
