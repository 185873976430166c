import { BATCH_STATUS, type BatchStatus } from '../ingestion/batch-status.ts';

/** The events an endpoint may subscribe to (docs/reference.md §10.1): one per terminal batch status. */
export const WEBHOOK_EVENTS = [
  `batch.${BATCH_STATUS.completed}`,
  `batch.${BATCH_STATUS.completedWithErrors}`,
  `batch.${BATCH_STATUS.failed}`,
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/**
 * The event a batch ending in `status` raises, as SQL over a column or expression holding it: the
 * outbox insert names events the same way this list does.
 */
export const eventOfStatusSql = (status: string) => `'batch.' || ${status}`;

/** The event of a terminal batch status. */
export function eventOfStatus(status: BatchStatus): WebhookEvent | null {
  const event = `batch.${status}`;
  return (WEBHOOK_EVENTS as readonly string[]).includes(event) ? (event as WebhookEvent) : null;
}

/** The states of a delivery; `pending` until it is delivered or its attempts run out. */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Each delivery status by name, for code and statements that name one (`DELIVERY_STATUS.pending`). */
export const DELIVERY_STATUS = Object.fromEntries(DELIVERY_STATUSES.map((status) => [status, status])) as {
  readonly [S in DeliveryStatus]: S;
};

/** Most endpoints one tenant may have (docs/reference.md §10.1). */
export const MAX_ENDPOINTS_PER_TENANT = 10;
