import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { randomUUID } from 'node:crypto';
import {
  serializeRows,
  touchProducts,
  upsertProducts,
  upsertVariants,
  variantKeys,
} from '../src/catalog/catalog.repository.ts';
import {
  insertSerializedHistory,
  serializeEntries,
  type SerializedEntries,
} from '../src/catalog/history.repository.ts';
import type { ProductRow, VariantRow } from '../src/catalog/merge-items.ts';
import type { FullProductIngest } from '../src/catalog/product-schema.ts';
import { historyEntries, readChunkBase } from '../src/worker/chunk-history.ts';
import { changedStoredProducts } from '../src/worker/chunk-writer.ts';
import type { TimedSpan } from './machine-load.ts';

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

/** A batch as the baseline writes it: its rows, its history entries and the products they touch. */
interface PreparedBatch {
  products: ProductRow[];
  variants: VariantRow[];
  history: SerializedEntries;
  touched: string[];
}

/**
 * The history the service records for `batches`, applied in order on top of what `db` stores for
 * `tenantId` now: the same entries (chunk-history.ts) the worker makes, made before the timing.
 */
async function prepareBatches(
  db: Database,
  tenantId: string,
  batches: unknown[][],
): Promise<PreparedBatch[]> {
  const items = batches.flat() as FullProductIngest[];
  const base = await readChunkBase(db, db.kind, tenantId, {
    externalIds: [...new Set(items.map((item) => item.external_id))],
    skus: [...new Set(items.flatMap((item) => item.variants.map((variant) => variant.sku)))],
  });
  return batches.map((batch) => {
    const entries = historyEntries(
      base,
      (batch as FullProductIngest[]).map((item, index) => ({ index, item })),
    );
    if (entries === null) throw new Error('a bench batch uses a sku another product owns');
    const history = serializeEntries(entries);
    return { ...toRows(batch), history, touched: changedStoredProducts(history) };
  });
}

/**
 * The ceiling: what the worker writes for the same batches, straight into PostgreSQL with the
 * set-based statements the worker uses (one transaction per batch of 1000 products): the products,
 * their history entries, the `updated_at` of the products those entries change, the variants with
 * their images. No HTTP, no queue, no validation, no merge, no read of the stored rows and no
 * bookkeeping in between: the history's entries are made from the stored rows before the timing.
 */
export async function openBaseline(databaseUrl: string | undefined): Promise<{
  /** Seconds to write `batches`; `span` (the CPU meter, bench/machine-load.ts) marks the timed part. */
  run(batches: unknown[][], tenantId: string, span?: TimedSpan): Promise<number>;
  /**
   * Waits (up to 20 s) until no autovacuum worker runs on the server, so that a timed phase does
   * not share the machine with the clean-up of the phase before it, then checkpoints, so that each
   * phase starts right after a checkpoint (below).
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}> {
  const schema = `bench_base_${process.pid}`;
  const dataDir = databaseUrl ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'bench-base-'));
  const db: Database = await openDatabase({ databaseUrl, databaseSchema: schema, dataDir, poolSize: 2 });
  await migrate(db, databaseUrl ? schema : undefined);
  return {
    async run(batches, tenantId, span) {
      const prepared = await prepareBatches(db, tenantId, batches);
      span?.start();
      const started = performance.now();
      for (const { products, variants, history, touched } of prepared) {
        await db.transaction(async (tx) => {
          await upsertProducts(tx, tenantId, serializeRows(products), variantKeys(variants));
          await insertSerializedHistory(tx, { tenantId, batchId: randomUUID() }, history);
          await touchProducts(tx, tenantId, touched);
          await upsertVariants(tx, tenantId, serializeRows(variants));
        });
      }
      const seconds = (performance.now() - started) / 1000;
      span?.end();
      return seconds;
    },
    async settle() {
      if (!databaseUrl) return;
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'`,
        );
        if (row?.n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      // A timed run writes about 150 MB of WAL, so with the default max_wal_size (1 GB) a checkpoint
      // starts every few runs: the run that met one wrote a full page image of each page it touched
      // first, and shared the disk with the checkpoint's writes. Starting each phase right after a
      // checkpoint gives the baseline and the service the same start (docs/performance.md, Method).
      await db.exec('CHECKPOINT');
    },
    async close() {
      if (databaseUrl) await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.close();
      if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
