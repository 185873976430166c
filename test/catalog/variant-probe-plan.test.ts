import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { VARIANT_PROBE } from '../../src/catalog/variant-probe.ts';
import { findVariantsBySku } from '../../src/catalog/catalog.repository.ts';
import { findCatalogRows } from '../../src/catalog/catalog-state.repository.ts';
import { explainJson, scansOf } from '../helpers/query-plans.ts';

/**
 * The probe that finds a tenant's stored variants by sku (src/catalog/variant-probe.ts) uses the
 * primary key also for a tenant the table's statistics do not hold yet: one that started after the
 * last ANALYZE, beside a tenant that ANALYZE saw. Estimating such a tenant at one row, the planner
 * took `variants_by_product` (whose first column is the tenant too) and read the tenant's every
 * variant once per sku: seconds per chunk. Both databases run the same planner.
 */

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

/** Stores `products` products of `tenant` with 3 variants each, by SQL (the service is not the subject). */
async function storeCatalog(tenant: string, products: number): Promise<void> {
  const db = svc.service.db;
  await db.query(
    `INSERT INTO products (tenant_id, external_id, name, description, style, type, sub_type, created_at, updated_at)
     SELECT $1, 'p-' || g, 'Chair ' || g, '', 'modern', 'chair', 'dining', now(), now()
     FROM generate_series(1, $2::int) AS g`,
    [tenant, products],
  );
  await db.query(
    `INSERT INTO variants (tenant_id, sku, external_id, name, item_url, depth, height, width, weight, color,
                           price, brand, created_at, updated_at)
     SELECT $1, 'sku-' || g || '-' || v, 'p-' || g, 'Chair ' || g, 'https://shop.example/' || g, 50, 80, 45, 7,
            'Oak', 100 + v, 'Brand', now(), now()
     FROM generate_series(1, $2::int) AS g, generate_series(1, 3) AS v`,
    [tenant, products],
  );
}

void test('the sku probe uses the primary key for a tenant the statistics do not hold yet, and finds its rows', async () => {
  const db = svc.service.db;
  // Autovacuum would analyze the new tenant's rows sooner or later; the plan must not depend on it.
  await db.exec('ALTER TABLE variants SET (autovacuum_enabled = false)');
  try {
    await storeCatalog('seen', 10_000);
    await db.exec('ANALYZE products; ANALYZE variants');
    await storeCatalog('new', 3_000);
    const skus = Array.from({ length: 1000 }, (_, i) => `sku-${2001 + i}-2`);

    const plan = await explainJson(
      db,
      `SELECT v.* FROM unnest($2::text[]) AS k(sku) CROSS JOIN LATERAL (${VARIANT_PROBE}) AS v`,
      ['new', skus],
    );
    assert.deepEqual([...new Set(scansOf(plan, 'variants'))], ['variants_pkey'], JSON.stringify(plan));

    const owned = await findVariantsBySku(db, 'new', [
      'sku-2001-2',
      'sku-3000-3',
      'sku-3001-1',
      'sku-9000-1',
    ]);
    assert.deepEqual([...owned.values()].map((v) => [v.sku, v.external_id]).sort(), [
      ['sku-2001-2', 'p-2001'],
      ['sku-3000-3', 'p-3000'],
    ]);
    const rows = await findCatalogRows(db, 'new', {
      externalIds: ['p-5', 'p-3001'],
      skus: ['sku-5-1', 'sku-9999-1'],
    });
    assert.deepEqual([...rows.products.keys()], ['p-5']);
    assert.deepEqual(
      [...rows.variants.values()].map((v) => [v.sku, v.external_id, v.price]),
      [['sku-5-1', 'p-5', 101]],
    );
  } finally {
    await db.exec('ALTER TABLE variants RESET (autovacuum_enabled)');
  }
});
