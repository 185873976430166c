import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../src/db/database.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { plannedScans } from '../helpers/query-plans.ts';
import {
  claimDelivery,
  hasDelivery,
  recordAttempt,
  scheduleRedelivery,
  type ClaimedDelivery,
} from '../../src/webhooks/delivery.repository.ts';

/**
 * The statements on one delivery (src/db/hidden-tenant.ts) use the primary key also for a tenant and
 * an endpoint the table's statistics do not hold yet (started after the last ANALYZE of
 * `webhook_deliveries`), beside a backlog of due deliveries that came after it too (an endpoint that
 * is down). With the tenant and endpoint as plain `$1` and `$2` this test fails on both databases:
 * PGlite and the server took `webhook_deliveries_by_endpoint` for all four statements (as cheap as
 * the primary key to the planner while both indexes are as deep: a small table). With only the tenant
 * hidden, both still took it for hasDelivery and scheduleRedelivery, and took `webhook_deliveries_due`
 * for claimDelivery and recordAttempt, filtering the whole backlog; hence the endpoint and `'pending'`
 * are hidden too.
 */

let svc: TestService;
before(async () => {
  // No worker, so no dispatcher: its sweep would claim the stored due deliveries.
  svc = await startTestService({ ROLE: 'api' });
});
after(async () => {
  await svc?.stop();
});

/** A uuid whose first group says what it is (`kind`), numbered `n`. */
const uuid = (kind: number, n: number) =>
  `${String(kind).padStart(8, '0')}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const DELIVERY = 1;
const ENDPOINT = 2;

// Small: the old plans need `webhook_deliveries_by_endpoint` as deep as the primary key. With 10,000
// or 20,000 deliveries analyzed it was a level deeper, and the old SQL took the primary key on the server.
const SEEN_ENDPOINTS = 10;
const SEEN_DELIVERIES = 5_000;
const NEW_DELIVERIES = 5_000;
const BACKLOG = 2_000;

/** Stores an endpoint of `tenant` by SQL (the service is not the subject). */
async function storeEndpoint(tenant: string, endpointId: string): Promise<void> {
  await svc.service.db.query(
    `INSERT INTO webhook_endpoints (tenant_id, id, url, events, secret, created_at)
     VALUES ($1, $2, 'http://127.0.0.1:9/hooks', ARRAY['batch.completed'], 'secret-' || $1, now())`,
    [tenant, endpointId],
  );
}

/**
 * Stores deliveries `uuid(DELIVERY, from)`… of `tenant` by SQL, spread over the endpoints
 * `uuid(ENDPOINT, firstEndpoint)`… (`endpoints` of them): delivered ones, or `pending` ones due a
 * minute ago and not claimed.
 */
async function storeDeliveries(
  tenant: string,
  {
    from,
    count,
    firstEndpoint,
    endpoints = 1,
    pending = false,
  }: {
    from: number;
    count: number;
    firstEndpoint: number;
    endpoints?: number;
    pending?: boolean;
  },
): Promise<void> {
  await svc.service.db.query(
    `INSERT INTO webhook_deliveries (tenant_id, id, endpoint_id, event, batch_id, status, attempts,
                                     next_attempt_at, delivered_at, created_at)
     SELECT $1, ('${uuid(DELIVERY, 0).slice(0, 24)}' || lpad(g::text, 12, '0'))::uuid,
            ('${uuid(ENDPOINT, 0).slice(0, 24)}' || lpad(($4::int + g % $5::int)::text, 12, '0'))::uuid,
            'batch.completed', gen_random_uuid(), CASE WHEN $6 THEN 'pending' ELSE 'delivered' END, 1,
            CASE WHEN $6 THEN now() - interval '1 minute' END, CASE WHEN $6 THEN NULL ELSE now() END,
            now() - make_interval(secs => $3::int - g)
     FROM generate_series($2::int, $2::int + $3::int - 1) AS g`,
    [tenant, from, count, firstEndpoint, endpoints, pending],
  );
}

void test('statements on one delivery use the primary key for a tenant and endpoint the statistics do not hold yet', async () => {
  const db = svc.service.db;
  // Autovacuum would analyze the new rows sooner or later; the plan must not depend on it.
  await db.exec('ALTER TABLE webhook_deliveries SET (autovacuum_enabled = false)');
  try {
    for (let n = 1; n <= SEEN_ENDPOINTS; n++) await storeEndpoint('seen', uuid(ENDPOINT, n));
    await storeDeliveries('seen', {
      from: 1,
      count: SEEN_DELIVERIES,
      firstEndpoint: 1,
      endpoints: SEEN_ENDPOINTS,
    });
    await db.exec('ANALYZE webhook_deliveries');

    // After the ANALYZE: the tenant 'new' and its endpoint, with thousands of deliveries, 1 % of
    // them pending; and an endpoint of 'seen' that is down, with a backlog of due deliveries.
    const endpointId = uuid(ENDPOINT, 101);
    const down = uuid(ENDPOINT, 102);
    await storeEndpoint('new', endpointId);
    await storeEndpoint('seen', down);
    await storeDeliveries('new', { from: 1, count: NEW_DELIVERIES, firstEndpoint: 101 });
    await storeDeliveries('new', { from: NEW_DELIVERIES + 1, count: 1, firstEndpoint: 101, pending: true });
    await storeDeliveries('seen', {
      from: 100_001,
      count: BACKLOG,
      firstEndpoint: 102,
      pending: true,
    });

    const ended = { tenantId: 'new', endpointId, deliveryId: uuid(DELIVERY, 2_100) };
    const due = { tenantId: 'new', deliveryId: uuid(DELIVERY, NEW_DELIVERIES + 1), claimLapseSeconds: 20 };
    const claim: ClaimedDelivery = {
      id: due.deliveryId,
      tenantId: 'new',
      batchId: uuid(3, 1),
      event: 'batch.completed',
      endpointId,
      url: 'http://127.0.0.1:9/hooks',
      enabled: true,
      secrets: ['secret-new'],
      attempts: 1,
      finalAttempt: false,
      payload: null,
      claimedAt: new Date(),
    };
    const statements: Record<string, (q: Queryable) => Promise<unknown>> = {
      hasDelivery: (q) => hasDelivery(q, ended),
      scheduleRedelivery: (q) => scheduleRedelivery(q, ended),
      claimDelivery: (q) => claimDelivery(q, due),
      recordAttempt: (q) => recordAttempt(q, claim, { outcome: 'delivered', statusCode: 200 }, '{}'),
    };
    const plans: Record<string, string[]> = {};
    for (const [name, run] of Object.entries(statements))
      plans[name] = await plannedScans(db, 'webhook_deliveries', run);
    assert.deepEqual(
      plans,
      Object.fromEntries(Object.keys(statements).map((name) => [name, ['webhook_deliveries_pkey']])),
    );

    // And each finds its delivery, and that one only.
    assert.equal(await hasDelivery(db, ended), true);
    assert.equal(await hasDelivery(db, { ...ended, endpointId: uuid(ENDPOINT, 1) }), false);
    assert.equal(await hasDelivery(db, { ...ended, tenantId: 'seen' }), false);
    assert.equal(await hasDelivery(db, { ...ended, deliveryId: uuid(DELIVERY, NEW_DELIVERIES + 2) }), false);

    const claimed = await claimDelivery(db, due);
    assert.ok(claimed?.claimedAt instanceof Date);
    // All but the batch (a random id) and the claim's time.
    const fields = (c: ClaimedDelivery) => [
      c.id,
      c.tenantId,
      c.event,
      c.endpointId,
      c.url,
      c.enabled,
      c.secrets,
      c.attempts,
      c.finalAttempt,
      c.payload,
    ];
    assert.deepEqual(fields(claimed), fields(claim));
    assert.equal(await claimDelivery(db, due), null, 'claimed already');
    assert.equal(await claimDelivery(db, { ...due, tenantId: 'seen' }), null);
    assert.equal(await claimDelivery(db, { ...due, deliveryId: ended.deliveryId }), null, 'delivered');
    assert.equal(
      await recordAttempt(db, claimed, { outcome: 'delivered', statusCode: 200 }, '{"n":1}'),
      true,
    );
    assert.equal(await recordAttempt(db, claimed, { outcome: 'delivered', statusCode: 200 }, null), false);

    assert.equal(await scheduleRedelivery(db, ended), true);
    assert.equal(await scheduleRedelivery(db, { ...ended, endpointId: uuid(ENDPOINT, 1) }), false);
    assert.equal(await scheduleRedelivery(db, { ...ended, tenantId: 'seen' }), false);

    // What changed: the claimed delivery, delivered; the redelivered one, pending with one more attempt.
    assert.deepEqual(
      await db.query(
        `SELECT tenant_id, id::text AS id, status, attempts, final_attempt, payload, next_attempt_at IS NOT NULL AS due
         FROM webhook_deliveries
         WHERE (tenant_id = 'new' AND (status <> 'delivered' OR attempts <> 1 OR payload IS NOT NULL))
            OR (tenant_id = 'seen' AND (status <> 'delivered' OR attempts <> 1 OR payload IS NOT NULL)
                AND endpoint_id <> $1)
         ORDER BY tenant_id, id`,
        [down],
      ),
      [
        {
          tenant_id: 'new',
          id: uuid(DELIVERY, 2_100),
          status: 'pending',
          attempts: 1,
          final_attempt: true,
          payload: null,
          due: true,
        },
        {
          tenant_id: 'new',
          id: uuid(DELIVERY, NEW_DELIVERIES + 1),
          status: 'delivered',
          attempts: 2,
          final_attempt: false,
          payload: '{"n":1}',
          due: false,
        },
      ],
    );
    assert.deepEqual(
      await db.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries
         WHERE endpoint_id = $1 AND status = 'pending' AND attempt_started_at IS NULL AND attempts = 1`,
        [down],
      ),
      [{ n: BACKLOG }],
    );
  } finally {
    await db.exec('ALTER TABLE webhook_deliveries RESET (autovacuum_enabled)');
  }
});
