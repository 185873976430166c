import type { Database } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { Logger } from '../observability/logger.ts';

/** What the worker side of a process runs on, shared by its parts: the database, the queue, metrics, the log. */
export interface WorkerDeps {
  db: Database;
  queue: JobQueue;
  metrics: Metrics;
  log: Logger;
}
