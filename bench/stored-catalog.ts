import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { dropSchemaWithJobs } from '../test/helpers/drop-schema.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import {
  serializeRows,
  upsertProducts,
  upsertVariants,
  variantKeys,
} from '../src/catalog/catalog.repository.ts';
import { toRows } from './baseline.ts';
import { BATCH, generateBatch } from './catalog-generator.ts';
import { createBenchClient, type BenchClient } from './http-client.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

/**
 * Stores `batches` × 1000 generated products (3 variants × 3 images each) for `tenantId` straight
 * into the database, with the worker's own set-based upserts: loading through the API would time
 * the ingestion, not what is measured on the stored catalog. Runs before the service starts, as
 * PGlite serves one process.
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
        await upsertProducts(tx, tenantId, serializeRows(products), variantKeys(variants));
        await upsertVariants(tx, tenantId, serializeRows(variants));
      });
    }
    if (db.kind === 'server') await db.exec('ANALYZE products; ANALYZE variants');
  } finally {
    await db.close();
  }
}

/** A service running on a stored catalog, and a client of its tenant. */
export interface StoredCatalog {
  database: 'server' | 'embedded';
  /** The products stored: ids `<prefix>-p0` … `<prefix>-p<n-1>`, skus `<id>-v0` … `-v2`. */
  products: number;
  prefix: string;
  service: ServiceProcess;
  client: BenchClient;
}

/**
 * Runs `measure` against a service started on a catalog of `batches` × 1000 generated products,
 * stored first (`loadCatalog`) in a schema of its own on the server at `databaseUrl`, or in a data
 * directory of its own on the embedded database; then stops the service and drops what was stored.
 * The service runs as `npm start` runs it (with `serviceNodeArgs`), without the vision model.
 */
export async function withStoredCatalog<T>(
  options: {
    /** Names the schema, data directory, tenant and log lines: `export`, `search`. */
    name: string;
    databaseUrl: string | undefined;
    batches: number;
    serviceNodeArgs?: readonly string[];
    log: (line: string) => void;
  },
  measure: (catalog: StoredCatalog) => Promise<T>,
): Promise<T> {
  const { name, databaseUrl, batches } = options;
  const schema = `bench_${name}_${process.pid}_${Date.now() % 100000}`;
  const dataDir = databaseUrl ? null : fs.mkdtempSync(path.join(os.tmpdir(), `bench-${name}-`));
  const tenantId = `bench-${name}-${randomUUID().slice(0, 8)}`;
  const prefix = 'x';
  try {
    const started = performance.now();
    await loadCatalog(
      databaseUrl ? { databaseUrl, schema } : { dataDir: dataDir! },
      tenantId,
      prefix,
      batches,
    );
    options.log(
      `${name} bench: ${batches * BATCH} products stored in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    const service = await startServiceProcess(
      {
        ANALYSIS_ENABLED: 'false',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir! }),
      },
      options.serviceNodeArgs,
    );
    try {
      const client = await createBenchClient(service.baseUrl, service.secret, tenantId);
      try {
        return await measure({
          database: databaseUrl ? 'server' : 'embedded',
          products: batches * BATCH,
          prefix,
          service,
          client,
        });
      } finally {
        await client.close();
      }
    } finally {
      await service.stop();
    }
  } finally {
    if (databaseUrl) await dropSchemaWithJobs(databaseUrl, schema);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
