import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import {
  serializeRows,
  upsertProducts,
  upsertVariants,
  variantKeys,
} from '../src/catalog/catalog.repository.ts';
import type { ProductRow, VariantRow } from '../src/catalog/merge-items.ts';
import type { FullProductIngest } from '../src/catalog/product-schema.ts';

/** Rows of a batch as the catalog stores them, prepared before timing. */
export function toRows(items: unknown[]): { products: ProductRow[]; variants: VariantRow[] } {
  const products: ProductRow[] = [];
  const variants: VariantRow[] = [];
  for (const raw of items as FullProductIngest[]) {
    const { variants: vs, ...product } = raw;
    products.push(product);
    for (const { images, ...v } of vs) {
      variants.push({
        ...v,
        external_id: product.external_id,
        images: (images ?? []).map((i) => ({ url: i.url, angle: i.angle ?? null })),
      });
    }
  }
  return { products, variants };
}

/**
 * The ceiling: the same rows upserted straight into PostgreSQL with the set-based statements the
 * worker uses (one statement per table per 1000 products, one transaction per batch), with no HTTP,
 * no queue, no validation and no bookkeeping in between.
 */
export async function openBaseline(databaseUrl: string | undefined): Promise<{
  run(batches: unknown[][], tenantId: string): Promise<number>;
  /**
   * Waits (up to 20 s) until no autovacuum worker runs on the server, so that a timed phase does
   * not share the machine with the clean-up of the phase before it.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}> {
  const schema = `bench_base_${process.pid}`;
  const dataDir = databaseUrl ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'bench-base-'));
  const db: Database = await openDatabase({ databaseUrl, databaseSchema: schema, dataDir, poolSize: 2 });
  await migrate(db, databaseUrl ? schema : undefined);
  return {
    async run(batches, tenantId) {
      const prepared = batches.map(toRows);
      const started = performance.now();
      for (const { products, variants } of prepared) {
        await db.transaction(async (tx) => {
          await upsertProducts(tx, tenantId, serializeRows(products), variantKeys(variants));
          await upsertVariants(tx, tenantId, serializeRows(variants));
        });
      }
      return (performance.now() - started) / 1000;
    },
    async settle() {
      if (!databaseUrl) return;
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`,
        );
        if (row?.n === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async close() {
      if (databaseUrl) await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.close();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
