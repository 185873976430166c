/**
 * The tenant `$1` as the value of a subquery (an InitPlan), for `tenant_id = ${HIDDEN_TENANT}` in
 * statements that find one row by its primary key (the tenant and the row's own id or sku): the
 * planner does not see the value, so it counts the tenant as an average one and takes the primary key.
 *
 * Seen, a tenant that the table's statistics do not hold yet (one that started after the table's
 * last ANALYZE) is estimated at one row, and the planner may take a secondary index whose first
 * column is the tenant too: it then reads every row of that tenant in that index and filters them
 * by id, a cost that grows with the tenant until autovacuum analyzes the table again. Measured on a
 * PostgreSQL 15 server (docs/performance.md): `variants_by_product` for the sku probe, 9–12 s for
 * 1000 skus (src/catalog/variant-probe.ts); `batches_by_tenant` or `batches_by_tenant_created`, or
 * `batches_unfinished` when the statement names unfinished states, for a batch by its id, 0.49–0.85 ms
 * per statement for a tenant with 5,000 batches instead of 0.05–0.17 ms; `webhook_deliveries_by_endpoint`
 * for a delivery by its id (src/webhooks/delivery.repository.ts: hasDelivery, scheduleRedelivery,
 * claimDelivery, recordAttempt), 0.25–0.56 ms for a tenant with 5,000 deliveries instead of
 * 0.03–0.13 ms. test/catalog/variant-probe-plan.test.ts, test/ingestion/batch-key-plan.test.ts and
 * test/webhooks/delivery-key-plan.test.ts show the plans.
 *
 * Not for statements that read a range of the tenant (a list, a backlog): there the tenant's own
 * estimate is what chooses the index.
 */
export const HIDDEN_TENANT = '(SELECT $1::text)';

/**
 * The endpoint `$2` hidden the same way, beside {@link HIDDEN_TENANT}, for a delivery by its endpoint
 * and id: with only the tenant hidden, a new endpoint still made `webhook_deliveries_by_endpoint` look
 * as cheap as the primary key.
 */
export const HIDDEN_ENDPOINT = '(SELECT $2::uuid)';
