import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { dropSchemaWithJobs } from '../test/helpers/drop-schema.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { serializeRows, upsertProducts, upsertVariants } from '../src/catalog/catalog.repository.ts';
import { toRows } from './baseline.ts';
import { generateBatch } from './catalog-generator.ts';
import { createBenchClient } from './http-client.ts';
import { startServiceProcess } from './service-process.ts';

/** One export's figures: what it sent, how fast, and the service's memory meanwhile. */
export interface ExportRun {
  products: number;
  lines: number;
  megabytes: number;
  seconds: number;
  productsPerSecond: number;
  /** The service's RSS just before the request, and the highest sampled (every 50 ms) while it ran. */
  rssBeforeMiB: number;
  rssMaxMiB: number;
}

export interface ExportBenchResult {
  database: 'server' | 'embedded';
  storedProducts: number;
  /** The service's RSS once ready on the loaded catalog, before any export. */
  readyRssMiB: number;
  /** Exports of the whole catalog. */
  whole: ExportRun[];
  /** Exports of a prefix holding about a ninth of it, to compare memory with the whole. */
  prefix: ExportRun[];
  /** The service's peak RSS (VmHWM) at the end. */
  peakRssMiB: number;
}

const BATCH = 1000;

/**
 * Stores `batches` × 1000 generated products (3 variants × 3 images each) for `tenantId` straight
 * into the database, with the worker's own set-based upserts: loading through the API would time
 * the ingestion, not the export. Runs before the service starts, as PGlite serves one process.
 */
export async function loadCatalog(
  target: { databaseUrl: string; schema: string } | { dataDir: string },
  tenantId: string,
  prefix: string,
  batches: number,
): Promise<void> {
  const db = await openDatabase(
    'databaseUrl' in target
      ? { databaseUrl: target.databaseUrl, databaseSchema: target.schema, dataDir: null, poolSize: 2 }
      : { databaseUrl: undefined, dataDir: target.dataDir },
  );
  try {
    await migrate(db, 'schema' in target ? target.schema : undefined);
    for (let b = 0; b < batches; b++) {
      const { products, variants } = toRows(generateBatch(prefix, b, { size: BATCH }));
      await db.transaction(async (tx) => {
        const variantRows = serializeRows(variants);
        await upsertProducts(tx, tenantId, serializeRows(products), variantRows);
        await upsertVariants(tx, tenantId, variantRows);
      });
    }
    if (db.kind === 'server') await db.exec('ANALYZE products; ANALYZE variants');
  } finally {
    await db.close();
  }
}

/**
 * `GET /products/export` of a stored catalog of `batches` × 1000 products (CONTRACT §11.4): the
 * whole catalog `repeats` times, then a prefix of about a ninth of it as often, each read as fast as
 * the client takes it, with the service's RSS sampled meanwhile. A flat memory shows as the same
 * peak for both sizes.
 */
export async function benchExport(options: {
  databaseUrl: string | undefined;
  batches: number;
  repeats: number;
  serviceNodeArgs?: readonly string[];
  log: (line: string) => void;
}): Promise<ExportBenchResult> {
  const { databaseUrl, batches, log } = options;
  const schema = `bench_export_${process.pid}_${Date.now() % 100000}`;
  const dataDir = databaseUrl ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'bench-export-'));
  const tenantId = `bench-export-${randomUUID().slice(0, 8)}`;
  const prefix = 'x';
  const started = performance.now();
  await loadCatalog(databaseUrl ? { databaseUrl, schema } : { dataDir: dataDir! }, tenantId, prefix, batches);
  log(
    `export bench: ${batches * BATCH} products stored in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );

  const service = await startServiceProcess(
    {
      ANALYSIS_ENABLED: 'false',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir! }),
    },
    options.serviceNodeArgs,
  );
  const client = await createBenchClient(service.baseUrl, service.secret, tenantId);
  try {
    const readyRssMiB = service.rssMiB();
    const run = async (query: string, products: number): Promise<ExportRun> => {
      const rssBeforeMiB = service.rssMiB();
      let rssMaxMiB = rssBeforeMiB;
      const sampler = setInterval(() => {
        rssMaxMiB = Math.max(rssMaxMiB, service.rssMiB());
      }, 50);
      try {
        const { lines, bytes, ms } = await client.exportCatalog(query);
        if (lines !== products)
          throw new Error(`export of ${query || 'everything'}: ${lines} lines, ${products} expected`);
        return {
          products,
          lines,
          megabytes: bytes / 1e6,
          seconds: ms / 1000,
          productsPerSecond: products / (ms / 1000),
          rssBeforeMiB,
          rssMaxMiB: Math.max(rssMaxMiB, service.rssMiB()),
        };
      } finally {
        clearInterval(sampler);
      }
    };
    // The ids are `x-p<n>`: `x-p1` starts 1 + 10 + 100 + … of them, about a ninth of a power of ten.
    const total = batches * BATCH;
    let inPrefix = 0;
    for (let n = 1; n < total; n = n * 10) inPrefix += Math.min(n, total - n);
    const whole: ExportRun[] = [];
    const part: ExportRun[] = [];
    for (let r = 0; r < options.repeats; r++) {
      part.push(await run(`?prefix=${prefix}-p1`, inPrefix));
      whole.push(await run('', total));
      log(`export bench: repeat ${r + 1} of ${options.repeats} done`);
    }
    return {
      database: databaseUrl ? 'server' : 'embedded',
      storedProducts: total,
      readyRssMiB,
      whole,
      prefix: part,
      peakRssMiB: service.peakRssMiB(),
    };
  } finally {
    await client.close();
    await service.stop();
    if (databaseUrl) await dropSchemaWithJobs(databaseUrl, schema);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
