import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import type { Metrics } from '../observability/metrics.ts';
import { createWebhookDispatcher, type WebhookDispatcher } from './delivery-job.ts';
import { createWebhookSender } from './delivery-sender.ts';

export type { WebhookDispatcher } from './delivery-job.ts';

/** What the service calls itself in a delivery's `User-Agent`. */
const USER_AGENT = 'catalog-ingestion-service-webhooks/0.1 (+https://www.standardwebhooks.com/)';

/** Starts sending webhook deliveries in a worker process, as `config` says. */
export async function startWebhookDispatcher(
  config: Config,
  deps: { db: Database; queue: JobQueue; metrics: Metrics; log: { warn(obj: object, msg?: string): void } },
): Promise<WebhookDispatcher> {
  const dispatcher = createWebhookDispatcher({
    ...deps,
    send: createWebhookSender({
      allowPrivateHosts: config.webhooks.allowPrivateHosts,
      userAgent: USER_AGENT,
    }),
    retrySchedule: config.webhooks.retrySchedule,
  });
  await dispatcher.start();
  return dispatcher;
}
