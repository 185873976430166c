/**
 * One stored variant of the tenant `$1` by its sku `k.sku` (a LATERAL subquery over the skus' unnest,
 * `LIMIT 1` keeping the planner from flattening it): a primary-key probe per sku. With `sku = ANY(…)`
 * the planner scanned the tenant's whole index range, which grew with the catalog.
 *
 * The tenant is the value of a subquery, which the planner does not see. Seen, a tenant that the
 * table's statistics do not hold yet (one that started after the last ANALYZE) is estimated at one
 * row, and the planner took `variants_by_product`, whose first column is the tenant too: it then
 * read that tenant's every variant once per sku, filtering by sku (9–12 s for 1000 skus of a tenant
 * with 27,000 variants, beside another tenant's 300,000 that ANALYZE had seen). Unseen, the tenant
 * counts as an average one, and only the primary key finds a sku without reading its range.
 * test/catalog/variant-probe-plan.test.ts shows the plan.
 */
export const VARIANT_PROBE =
  'SELECT * FROM variants WHERE tenant_id = (SELECT $1::text) AND sku = k.sku LIMIT 1';
