import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.ts';
import type { JobQueue } from '../queue/job-queue.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/app-errors.ts';
import { decodeTimeCursor, encodeTimeCursor } from '../pagination/cursor.ts';
import { UUID } from '../db/uuid.ts';
import type { Page } from '../pagination/page.ts';
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  rotateSecret,
} from './endpoint.repository.ts';
import { hasDelivery, listDeliveries, scheduleRedelivery } from './delivery.repository.ts';
import type { DeliveryRecord, EndpointRecord } from './webhook.schemas.ts';
import { MAX_ENDPOINTS_PER_TENANT, WEBHOOK_EVENTS, type WebhookEvent } from './webhook-events.ts';
import { newSecret } from './webhook-signature.ts';

/** How long a rotated-out secret still signs deliveries (docs/reference.md §10.1). */
export const SECRET_OVERLAP_SECONDS = 24 * 60 * 60;

/** Managing a tenant's webhook endpoints and reading their delivery logs; knows nothing of HTTP. */
export interface WebhookService {
  create(
    tenantId: string,
    endpoint: { url: string; events?: WebhookEvent[]; description?: string | null },
  ): Promise<EndpointRecord & { secret: string }>;
  list(tenantId: string, query: { limit: number; cursor?: string }): Promise<Page<EndpointRecord>>;
  get(tenantId: string, id: string): Promise<EndpointRecord>;
  remove(tenantId: string, id: string): Promise<void>;
  rotateSecret(tenantId: string, id: string): Promise<{ secret: string }>;
  listDeliveries(
    tenantId: string,
    id: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<DeliveryRecord>>;
  /** Makes the delivery due now (one more attempt if it had ended) and wakes the delivery workers. */
  redeliver(tenantId: string, id: string, deliveryId: string): Promise<void>;
}

const notFound = () => new NotFoundError('No webhook endpoint with this id.');

/** A page of `limit` rows out of `limit + 1` read, with the cursor after its last row when more follow. */
function pageOf<T extends { id: string; created_at: string }>(
  rows: T[],
  limit: number,
  scope: string,
): Page<T> {
  const data = rows.slice(0, limit);
  const last = data.at(-1);
  return {
    data,
    next_cursor:
      rows.length > limit && last
        ? encodeTimeCursor(scope, { createdAt: last.created_at, id: last.id })
        : null,
  };
}

/** Creates the webhook service; `allowPrivateHosts` also admits plain http URLs (tests, on-premise). */
export function createWebhookService(deps: {
  db: Database;
  queue: JobQueue;
  allowPrivateHosts: boolean;
}): WebhookService {
  const { db } = deps;

  /** The endpoint, or 404 for an unknown id, a malformed one or another tenant's: all look alike. */
  const endpointOf = async (tenantId: string, id: string) => {
    const endpoint = UUID.test(id) ? await findEndpoint(db, tenantId, id) : null;
    if (!endpoint) throw notFound();
    return endpoint;
  };

  /** Refuses a URL deliveries cannot go to; its address is checked at each attempt (DNS changes). */
  const checkUrl = (raw: string) => {
    // The schema checks URI syntax (RFC 3986); a request needs more: a port up to 65535, a host that
    // is a name or an address (not `1.2.3.4.5`, not a broken `xn--` label).
    if (!URL.canParse(raw)) {
      throw new ValidationError([
        {
          field: 'url',
          code: 'invalid_format',
          message: 'url must be a URL a request can be sent to: its host or port is not valid.',
        },
      ]);
    }
    const url = new URL(raw);
    const plainAllowed = deps.allowPrivateHosts && url.protocol === 'http:';
    if (url.protocol !== 'https:' && !plainAllowed) {
      throw new ValidationError([{ field: 'url', code: 'https_required', message: 'url must use https.' }]);
    }
    if (url.username || url.password) {
      throw new ValidationError([
        { field: 'url', code: 'invalid_format', message: 'url must not hold credentials (user:password@).' },
      ]);
    }
  };

  return {
    async create(tenantId, { url, events = [...WEBHOOK_EVENTS], description = null }) {
      checkUrl(url);
      const secret = newSecret();
      const created = await db.transaction((tx) =>
        insertEndpoint(tx, {
          tenantId,
          id: randomUUID(),
          url,
          events,
          description,
          secret,
          max: MAX_ENDPOINTS_PER_TENANT,
        }),
      );
      if (!created) {
        throw new ConflictError(
          `A tenant may have at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints; delete one first.`,
        );
      }
      return { ...created, secret };
    },

    async list(tenantId, { limit, cursor }) {
      const scope = 'webhook-endpoints';
      const after = cursor === undefined ? null : decodeTimeCursor(cursor, scope);
      const rows = await listEndpoints(db, { tenantId, after, limit: limit + 1 });
      return pageOf(rows, limit, scope);
    },

    get: endpointOf,

    async remove(tenantId, id) {
      if (!UUID.test(id) || !(await deleteEndpoint(db, tenantId, id))) throw notFound();
    },

    async rotateSecret(tenantId, id) {
      const secret = newSecret();
      const rotated =
        UUID.test(id) &&
        (await rotateSecret(db, { tenantId, id, secret, overlapSeconds: SECRET_OVERLAP_SECONDS }));
      if (!rotated) throw notFound();
      return { secret };
    },

    async listDeliveries(tenantId, id, { limit, cursor }) {
      const endpoint = await endpointOf(tenantId, id);
      const scope = `webhook-deliveries:${endpoint.id}`;
      const before = cursor === undefined ? null : decodeTimeCursor(cursor, scope);
      const rows = await listDeliveries(db, { tenantId, endpointId: endpoint.id, before, limit: limit + 1 });
      return pageOf(rows, limit, scope);
    },

    async redeliver(tenantId, id, deliveryId) {
      const endpoint = await endpointOf(tenantId, id);
      const key = { tenantId, endpointId: endpoint.id, deliveryId };
      const noDelivery = () => new NotFoundError('No delivery with this id for this endpoint.');
      if (!UUID.test(deliveryId)) throw noDelivery();
      // An unknown delivery is 404 whatever the endpoint's state; a known one of a disabled endpoint, 409.
      if (!endpoint.enabled) {
        if (!(await hasDelivery(db, key))) throw noDelivery();
        throw new ConflictError(
          'This endpoint is disabled (its URL answered 410 Gone); create a new endpoint to receive deliveries again.',
        );
      }
      if (!(await scheduleRedelivery(db, key))) throw noDelivery();
      await deps.queue.sendDelivery({ tenantId, deliveryId });
    },
  };
}
