import { randomUUID } from 'node:crypto';
import { createBenchDatabase } from './bench-database.ts';
import { openBaseline } from './baseline.ts';
import { createBenchClient, type BenchClient } from './http-client.ts';
import { endToEnd, repeatBatches } from './ingestion.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';

/** What `--pooled-url` compares; see docs/performance.md, Method. */
export interface PooledBenchOptions {
  /** The server itself: the direct service's way there, the baseline's, and where the databases are made. */
  directUrl: string;
  /** A transaction-pooling PgBouncer in front of that server, passing any database name through. */
  pooledUrl: string;
  batchesPerRun: number;
  repeats: number;
  warmUpRepeats: number;
  analyzer: boolean;
  serviceNodeArgs: string[];
  log: (line: string) => void;
}

/** One phase's figures, products/s, one element per counted repeat. */
export interface PooledPhaseFigures {
  baseline: number[];
  direct: number[];
  pooled: number[];
  /** Each repeat's pooled run against the direct run next to it. */
  pooledOverDirect: number[];
}

export interface PooledBenchResult {
  fresh: PooledPhaseFigures;
  update: PooledPhaseFigures;
  resend: PooledPhaseFigures;
}

const BATCH = 1000;
const PHASES = ['fresh', 'update', 'resend'] as const;

/**
 * Ingestion through the pooler against direct, in one run: two services, each in a database of its
 * own (bench-database.ts), one connected to the server and one through the pooler, take the same
 * batches phase by phase, one after the other, with the baseline before them. Which of the two goes
 * first alternates from repeat to repeat, so that neither always meets the other's leftovers
 * (autovacuum, the checkpoint after it). Run one after the other, as two whole bench runs, the two
 * sides met the machine minutes apart, and a slow spell of a few minutes moved their ratio by as
 * much as the pooler costs (docs/performance.md).
 */
export async function benchPooledAgainstDirect(options: PooledBenchOptions): Promise<PooledBenchResult> {
  const { log } = options;
  const stamp = `${process.pid}_${Date.now() % 100000}`;
  const dropped: Array<() => Promise<void>> = [];
  const services: ServiceProcess[] = [];
  const clients: BenchClient[] = [];
  let baseline: Awaited<ReturnType<typeof openBaseline>> | null = null;
  try {
    const sides = [] as Array<{ name: 'direct' | 'pooled'; service: ServiceProcess }>;
    for (const [name, url] of [
      ['direct', options.directUrl],
      ['pooled', options.pooledUrl],
    ] as const) {
      const database = await createBenchDatabase(options.directUrl, url, `bench_${name}_${stamp}`);
      dropped.push(() => database.drop());
      const env: Record<string, string> = { DATABASE_URL: database.url };
      if (!options.analyzer) env.ANALYSIS_ENABLED = 'false';
      const service = await startServiceProcess(env, options.serviceNodeArgs);
      services.push(service);
      sides.push({ name, service });
    }
    baseline = await openBaseline(options.directUrl);
    const figures = Object.fromEntries(
      PHASES.map((phase) => [phase, { baseline: [], direct: [], pooled: [], pooledOverDirect: [] }]),
    ) as unknown as PooledBenchResult;

    for (let r = 0; r < options.warmUpRepeats + options.repeats; r++) {
      const warmUp = r < options.warmUpRepeats;
      const prefix = `r${r}-${randomUUID().slice(0, 8)}`;
      const batches = repeatBatches(prefix, options.batchesPerRun);
      // The same tenant and batches on both sides: their databases are apart, their work the same.
      const clientOf = new Map<string, BenchClient>();
      for (const { name, service } of sides) {
        const client = await createBenchClient(service.baseUrl, service.secret, `bench-${prefix}`);
        clients.push(client);
        clientOf.set(name, client);
      }
      const order = r % 2 === 0 ? sides : [...sides].reverse();
      const lines: string[] = [];
      for (const phase of PHASES) {
        const items = batches[phase];
        await baseline.settle();
        const base = (items.length * BATCH) / (await baseline.run(items, `base-${prefix}`));
        const bodies = items.map((batch) => JSON.stringify({ items: batch }));
        const pace: Record<string, number> = {};
        for (const { name } of order) {
          await baseline.settle();
          pace[name] = await endToEnd(clientOf.get(name)!, bodies, []);
        }
        const [direct, pooled] = [pace.direct!, pace.pooled!];
        if (!warmUp) {
          const f = figures[phase];
          f.baseline.push(base);
          f.direct.push(direct);
          f.pooled.push(pooled);
          f.pooledOverDirect.push(pooled / direct);
        }
        lines.push(
          `${phase} direct ${direct.toFixed(0)}/s, pooled ${pooled.toFixed(0)}/s, baseline ${base.toFixed(0)}/s`,
        );
      }
      const label = warmUp ? 'warm-up' : `repeat ${r + 1 - options.warmUpRepeats}/${options.repeats}`;
      log(`pooled against direct, ${label} (${order[0]!.name} first): ${lines.join('; ')}`);
    }
    return figures;
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await baseline?.close();
    await Promise.all(services.map((service) => service.stop()));
    for (const drop of dropped) {
      await drop().catch((error: unknown) => log(`could not drop a bench database: ${String(error)}`));
    }
  }
}
