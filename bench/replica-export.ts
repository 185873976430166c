import { randomUUID } from 'node:crypto';
import { startStandbyPair } from '../reliability/standby-pair.ts';
import { waitForReplica } from '../src/db/replica-reads.ts';
import { openServerDatabase } from '../src/db/server-database.ts';
import { BATCH, generateBatch } from './catalog-generator.ts';
import { createBenchClient, type BenchClient } from './http-client.ts';
import { endToEnd } from './ingestion.ts';
import { readCpuSeconds } from './machine-load.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { loadCatalog } from './stored-catalog.ts';

/** Ingestion with and without exports beside it, for one place the exports are read from. */
export interface ReplicaExportRun {
  /** Where the exports read: `primary` (no DATABASE_READ_URL) or `replica`. */
  exportsFrom: 'primary' | 'replica';
  /** End-to-end products/s of fresh batches, nothing else running, per repeat. */
  alone: number[];
  /** The same while 100,000-product exports run back to back, per repeat. */
  withExports: number[];
  /**
   * Products per second of the worker's busy time (1000 × batches / the summed
   * `ingestion_batch_duration_seconds`, pick-up to terminal), alone and with the exports: what
   * processing takes, without the time a batch waits for the worker to pick it up.
   */
  busy: { alone: number[]; withExports: number[] };
  /** Exports finished while ingesting, and their products/s. */
  exports: { count: number; productsPerSecond: number[] };
  /** The service's CPU seconds per 1000 products ingested, alone and with the exports. */
  serviceCpuPer1000: { alone: number[]; withExports: number[] };
  /** The service's `db_replica_reads_total` at the end, by outcome (empty without a replica). */
  replicaReads: Record<string, number>;
}

export interface ReplicaExportBenchResult {
  storedProducts: number;
  batchesPerRun: number;
  runs: ReplicaExportRun[];
}

/** The worker's summed batch durations and their count, from the service's /metrics. */
async function batchSeconds(service: ServiceProcess): Promise<{ seconds: number; batches: number }> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    seconds: value('ingestion_batch_duration_seconds_sum'),
    batches: value('ingestion_batch_duration_seconds_count'),
  };
}

/** `db_replica_reads_total` by outcome, from the service's /metrics. */
async function replicaReads(service: ServiceProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${service.baseUrl}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^db_replica_reads_total\{outcome="(\w+)"\} (\d+)/gm))
    counts[match[1]!] = Number(match[2]);
  return counts;
}

/** Exports the whole catalog as NDJSON back to back until `stop()`, which waits for the last. */
function exportLoop(client: BenchClient, products: number) {
  const productsPerSecond: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const { lines, ms } = await client.exportCatalog('', 'application/x-ndjson');
      // The ingestion beside it adds products to the same tenant.
      if (lines < products) throw new Error(`export: ${lines} lines, ${products} at least expected`);
      productsPerSecond.push(lines / (ms / 1000));
    }
  })();
  return {
    productsPerSecond,
    async stop() {
      running = false;
      await done;
    },
  };
}

/**
 * `npm run bench -- --only replica`: whether a 100,000-product export served from a read replica
 * leaves ingestion throughput where it is (issue #54). Builds a PostgreSQL primary and a streaming
 * standby of its own (reliability/standby-pair.ts, asynchronous, both on this machine), stores the
 * catalog on the primary, then, once with the exports read from the primary (no DATABASE_READ_URL)
 * and once from the standby (DATABASE_READ_URL), times fresh batches of 1000 products × 3 variants
 * × 3 images through the service (the ingestion bench's fresh phase), alone and while NDJSON exports
 * of the whole catalog run back to back, alternating per repeat.
 */
export async function benchReplicaExport(options: {
  batches: number;
  batchesPerRun: number;
  repeats: number;
  serviceNodeArgs?: readonly string[];
  log: (line: string) => void;
}): Promise<ReplicaExportBenchResult> {
  const pair = await startStandbyPair({ synchronous: false });
  try {
    const schema = 'bench_replica';
    const catalogTenant = `bench-replica-${randomUUID().slice(0, 8)}`;
    const started = performance.now();
    await loadCatalog({ databaseUrl: pair.primaryUrl, schema }, catalogTenant, 'x', options.batches);
    const products = options.batches * BATCH;
    // The standby replays the load before anything is timed (the service's start waits 10 s at most).
    const [primary, standby] = await Promise.all(
      [pair.primaryUrl, pair.standbyUrl].map((url) => openServerDatabase(url, { max: 1 })),
    );
    try {
      if (!(await waitForReplica(primary!, standby!, 300_000)))
        throw new Error('the standby does not catch up');
    } finally {
      await Promise.all([primary!.close(), standby!.close()]);
    }
    options.log(
      `replica bench: ${products} products stored in ${((performance.now() - started) / 1000).toFixed(0)} s`,
    );
    const runs: ReplicaExportRun[] = [];
    for (const exportsFrom of ['primary', 'replica'] as const) {
      const service = await startServiceProcess(
        {
          ANALYSIS_ENABLED: 'false',
          DATABASE_URL: pair.primaryUrl,
          DATABASE_SCHEMA: schema,
          ...(exportsFrom === 'replica' ? { DATABASE_READ_URL: pair.standbyUrl } : {}),
        },
        options.serviceNodeArgs,
      );
      const clients: BenchClient[] = [];
      try {
        const exporter = await createBenchClient(service.baseUrl, service.secret, catalogTenant);
        clients.push(exporter);
        const run: ReplicaExportRun = {
          exportsFrom,
          alone: [],
          withExports: [],
          busy: { alone: [], withExports: [] },
          exports: { count: 0, productsPerSecond: [] },
          serviceCpuPer1000: { alone: [], withExports: [] },
          replicaReads: {},
        };
        /**
         * Fresh batches (new products) for the exported tenant: a tenant of its own, absent from
         * the statistics the load's ANALYZE took, had the chunk's read of its stored rows take
         * seconds (55 products/s end to end). Products/s and the service's CPU per 1000.
         */
        const ingest = async () => {
          const prefix = `i-${randomUUID().slice(0, 8)}`;
          const client = exporter;
          const bodies = Array.from({ length: options.batchesPerRun }, (_, b) =>
            JSON.stringify({ items: generateBatch(prefix, b) }),
          );
          const cpu = readCpuSeconds(service.pid);
          const before = await batchSeconds(service);
          const perSecond = await endToEnd(client, bodies, []);
          const cpuPer1000 = (readCpuSeconds(service.pid) - cpu) / options.batchesPerRun;
          const after = await batchSeconds(service);
          const busy = (BATCH * (after.batches - before.batches)) / (after.seconds - before.seconds);
          return { perSecond, cpuPer1000, busy };
        };
        for (let r = 0; r < options.repeats; r++) {
          // Alternating which comes first, so a slow spell of the machine weighs on both alike.
          for (const withExports of r % 2 === 0 ? [false, true] : [true, false]) {
            const loop = withExports ? exportLoop(exporter, products) : null;
            // The first export under way before the timing starts.
            if (loop) await new Promise((resolve) => setTimeout(resolve, 500));
            const { perSecond, cpuPer1000, busy } = await ingest();
            await loop?.stop();
            (withExports ? run.withExports : run.alone).push(perSecond);
            (withExports ? run.busy.withExports : run.busy.alone).push(busy);
            (withExports ? run.serviceCpuPer1000.withExports : run.serviceCpuPer1000.alone).push(cpuPer1000);
            if (loop) {
              run.exports.count += loop.productsPerSecond.length;
              run.exports.productsPerSecond.push(...loop.productsPerSecond);
            }
            options.log(
              `replica bench: exports from the ${exportsFrom}, repeat ${r + 1}, ` +
                `${withExports ? 'with exports' : 'alone'}: ${perSecond.toFixed(0)} products/s end to end, ` +
                `${busy.toFixed(0)} products/s of the worker's busy time`,
            );
          }
        }
        run.replicaReads = await replicaReads(service);
        runs.push(run);
      } finally {
        await Promise.all(clients.map((client) => client.close()));
        await service.stop();
      }
    }
    return { storedProducts: products, batchesPerRun: options.batchesPerRun, runs };
  } finally {
    await pair.destroy();
  }
}
