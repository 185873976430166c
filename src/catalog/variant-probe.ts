import { HIDDEN_TENANT } from '../db/hidden-tenant.ts';

/**
 * One stored variant of the tenant `$1` by its sku `k.sku` (a LATERAL subquery over the skus' unnest,
 * `LIMIT 1` keeping the planner from flattening it): a primary-key probe per sku. With `sku = ANY(…)`
 * the planner scanned the tenant's whole index range, which grew with the catalog.
 *
 * The tenant is hidden from the planner (src/db/hidden-tenant.ts says why): seen, a tenant that
 * started after the last ANALYZE made the planner take `variants_by_product` and read that tenant's
 * every variant once per sku (9–12 s for 1000 skus of a tenant with 27,000 variants, beside another
 * tenant's 300,000 that ANALYZE had seen). test/catalog/variant-probe-plan.test.ts shows the plan.
 */
export const VARIANT_PROBE = `SELECT * FROM variants WHERE tenant_id = ${HIDDEN_TENANT} AND sku = k.sku LIMIT 1`;
