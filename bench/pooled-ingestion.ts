import { randomUUID } from 'node:crypto';
import { createBenchDatabase } from './bench-database.ts';
import { openBaseline } from './baseline.ts';
import { createBenchClient, type BenchClient } from './http-client.ts';
import { BATCH } from './catalog-generator.ts';
import { assertHistoryRecorded, endToEnd, PHASES, repeatBatches, type Phase } from './ingestion.ts';
import { cpuSpan, type CpuUse } from './machine-load.ts';
import { startServiceProcess, type ServiceProcess } from './service-process.ts';
import { startBenchWebhooks, type BenchWebhooks } from './webhook-receiver.ts';

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
  /** `--webhook`: every bench tenant of both services has one endpoint, on one loopback receiver. */
  webhook: boolean;
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
  /** Each counted repeat's CPU, by whom, and the machine's load, over each side's timed part (bench/machine-load.ts). */
  cpu: Record<'baseline' | Side, CpuUse[]>;
}

/** The side-by-side figures of each phase. */
export type PooledBenchResult = Record<Phase, PooledPhaseFigures>;

type Side = 'direct' | 'pooled';

/**
 * Ingestion through the pooler against direct, in one run: two services, each in a database of its
 * own (bench-database.ts), one connected to the server and one through the pooler, take the same
 * batches phase by phase, one after the other, after the baseline of those batches. Which of the
 * two goes first alternates from phase to phase and from repeat to repeat, so that neither side
 * always follows the other (the checkpoint its writes leave, a slow spell of the machine). Run one
 * after the other as two whole bench runs, the two sides met the machine minutes apart, and a slow
 * spell moved their ratio by as much as the pooler costs (docs/performance.md).
 */
export async function benchPooledAgainstDirect(options: PooledBenchOptions): Promise<PooledBenchResult> {
  const held: Held = { drops: [], services: new Map(), webhooks: null, baseline: null };
  let figures: PooledBenchResult;
  try {
    figures = await measure(options, held);
  } catch (error) {
    // The run's own error is the one to see; a cleanup that fails after it would only hide it.
    await release(held).catch(() => undefined);
    throw error;
  }
  await release(held);
  return figures;
}

/** What a run opens, to be closed or dropped however it ends. */
interface Held {
  drops: Array<() => Promise<void>>;
  services: Map<Side, ServiceProcess>;
  webhooks: BenchWebhooks | null;
  baseline: Awaited<ReturnType<typeof openBaseline>> | null;
}

/** Closes and drops everything `held`, each step whatever the others did; throws the first failure. */
async function release(held: Held): Promise<void> {
  const steps = [
    () => held.baseline?.close(),
    () => Promise.all([...held.services.values()].map((service) => service.stop())),
    () => held.webhooks?.close(),
    ...held.drops,
  ];
  let failure: Error | null = null;
  for (const step of steps) {
    try {
      await step();
    } catch (error) {
      failure ??= error instanceof Error ? error : new Error(String(error));
    }
  }
  if (failure !== null) throw failure;
}

/** The run itself, its services, databases and baseline recorded in `held` as they open. */
async function measure(options: PooledBenchOptions, held: Held): Promise<PooledBenchResult> {
  const { log } = options;
  const stamp = `${process.pid}_${Date.now() % 100000}`;
  const webhooks = options.webhook ? await startBenchWebhooks() : null;
  held.webhooks = webhooks;
  for (const [side, url] of [
    ['direct', options.directUrl],
    ['pooled', options.pooledUrl],
  ] as const) {
    const database = await createBenchDatabase(options.directUrl, url, `bench_${side}_${stamp}`);
    held.drops.push(() => database.drop());
    const env: Record<string, string> = { DATABASE_URL: database.url };
    if (!options.analyzer) env.ANALYSIS_ENABLED = 'false';
    if (webhooks) env.WEBHOOK_ALLOW_PRIVATE_HOSTS = 'true';
    held.services.set(side, await startServiceProcess(env, options.serviceNodeArgs));
  }
  const baseline = await openBaseline(options.directUrl);
  held.baseline = baseline;
  const figures = {} as PooledBenchResult;
  for (const phase of PHASES) {
    figures[phase] = {
      baseline: [],
      direct: [],
      pooled: [],
      pooledOverDirect: [],
      cpu: { baseline: [], direct: [], pooled: [] },
    };
  }
  const servicePids = [...held.services.values()].map((service) => service.pid);

  for (let r = 0; r < options.warmUpRepeats + options.repeats; r++) {
    const counted = r - options.warmUpRepeats;
    const prefix = `r${r}-${randomUUID().slice(0, 8)}`;
    const batches = repeatBatches(prefix, options.batchesPerRun);
    // The same tenant and batches on both sides: their databases are apart, their work the same.
    const clients = new Map<Side, BenchClient>();
    try {
      for (const [side, service] of held.services) {
        clients.set(side, await createBenchClient(service.baseUrl, service.secret, `bench-${prefix}`));
        await webhooks?.register(service.baseUrl, service.secret, `bench-${prefix}`);
      }
      const lines: string[] = [];
      for (const [p, phase] of PHASES.entries()) {
        const items = batches[phase];
        const products = items.length * BATCH;
        // A side's service is the one whose turn it is; the other, waiting, counts as `other`.
        // During the baseline both wait, and both count as the service, as in the direct run.
        const cpu = {
          baseline: cpuSpan(servicePids),
          direct: cpuSpan([held.services.get('direct')!.pid]),
          pooled: cpuSpan([held.services.get('pooled')!.pid]),
        };
        await baseline.settle();
        const base = products / (await baseline.run(items, `base-${prefix}`, cpu.baseline));
        const bodies = items.map((batch) => JSON.stringify({ items: batch }));
        const order: Side[] = (counted + p) % 2 === 0 ? ['direct', 'pooled'] : ['pooled', 'direct'];
        const pace = {} as Record<Side, number>;
        for (const side of order) {
          await baseline.settle();
          pace[side] = await endToEnd(clients.get(side)!, bodies, [], cpu[side]);
        }
        if (counted >= 0) {
          const f = figures[phase];
          f.baseline.push(base);
          f.direct.push(pace.direct);
          f.pooled.push(pace.pooled);
          f.pooledOverDirect.push(pace.pooled / pace.direct);
          for (const side of ['baseline', 'direct', 'pooled'] as const)
            f.cpu[side].push(cpu[side].use(products));
        }
        if (phase === 'update') {
          for (const client of clients.values()) await assertHistoryRecorded(client, prefix);
        }
        lines.push(
          `${phase} (${order[0]} first) direct ${pace.direct.toFixed(0)}/s, pooled ` +
            `${pace.pooled.toFixed(0)}/s, baseline ${base.toFixed(0)}/s`,
        );
      }
      const label = counted < 0 ? 'warm-up' : `repeat ${counted + 1}/${options.repeats}`;
      log(`pooled against direct, ${label}: ${lines.join('; ')}`);
    } finally {
      await Promise.allSettled([...clients.values()].map((client) => client.close()));
    }
  }
  return figures;
}
