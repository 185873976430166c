import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createBenchDatabase } from './bench-database.ts';
import { openBaseline } from './baseline.ts';
import { BATCH, generateBatch } from './catalog-generator.ts';
import { createBenchClient, percentile, type BenchClient } from './http-client.ts';
import { cpuSpan, type CpuUse, type TimedSpan } from './machine-load.ts';
import { startServiceProcess } from './service-process.ts';
import { startBenchWebhooks } from './webhook-receiver.ts';

/** What one run measures; see docs/performance.md for the method. */
export interface IngestionBenchOptions {
  databaseUrl: string | undefined;
  batchesPerRun: number;
  repeats: number;
  /**
   * Repeats run first and not counted: the service's first batches run before V8 has compiled its
   * hot paths and before the new database's pages are cached, on both sides, at about half the pace
   * of the repeats after them (docs/performance.md).
   */
  warmUpRepeats: number;
  growthLevels: number[];
  growthBatches: number;
  pollers: number;
  /** How long the paced pollers run, and then the back-to-back ones. */
  pollSeconds: number;
  saturationSeconds: number;
  /** Load the vision model in the service too, as `npm start` does. */
  analyzer: boolean;
  /** Node.js options for the service process (`--service-node-args`), e.g. V8 heap flags. */
  serviceNodeArgs: string[];
  /** `--webhook`: every bench tenant has one webhook endpoint, on a loopback receiver. */
  webhook: boolean;
  log: (line: string) => void;
}

export interface RunFigures {
  baseline: number[];
  endToEnd: number[];
  ratio: number[];
  /** Each counted repeat's CPU, by whom, and the machine's load, over the baseline's timed part. */
  baselineCpu: CpuUse[];
  /** The same over the end-to-end run's. */
  endToEndCpu: CpuUse[];
}

const noFigures = (): RunFigures => ({
  baseline: [],
  endToEnd: [],
  ratio: [],
  baselineCpu: [],
  endToEndCpu: [],
});

/** Latencies seen by a phase's status pollers. */
export interface PollFigures {
  p50: number;
  p99: number;
  n: number;
  pollers: number;
  /**
   * The bench client's own event-loop delay while it polled (1 ms resolution): all 50 pollers share
   * one client thread, so answers released together are read one after another, and a share of each
   * latency is the client waiting for its turn on the same two cores, not the service.
   */
  clientLoopDelayMs: { p99: number; max: number };
}

export interface IngestionBenchResult {
  database: 'server' | 'embedded';
  /** With `--webhook`: endpoints registered (one per tenant) and deliveries the receiver got. */
  webhooks: { endpoints: number; deliveries: number } | null;
  /** How the service process was started (the options of `npm start` and `--service-node-args`). */
  serviceCommand: string;
  productsPerBatch: number;
  fresh: RunFigures;
  update: RunFigures;
  /**
   * The same 1000 products sent again and again, new prices each time (a client resending, or a
   * price feed): every batch names the skus of the batch before it.
   */
  resend: RunFigures;
  /** Submissions of the end-to-end runs: each while the worker processes the ones before it. */
  submitLatencyMs: { p50: number; p99: number; n: number };
  /** Submissions while the 50 pollers poll as well (paced, then back to back). */
  submitUnderPollingLatencyMs: { p50: number; p99: number; n: number };
  /** Each poller asks once per `intervalMs`, as a polling client does, while the worker is busy. */
  statusLatencyMs: PollFigures & { intervalMs: number };
  /** The same paced pollers once the worker is idle: what the API itself adds to a status read. */
  statusIdleLatencyMs: PollFigures & { intervalMs: number };
  /** The same pollers back to back: the request rate the service sustains while ingesting. */
  statusSaturation: PollFigures & { requestsPerSecond: number };
  growth: Array<{ storedBatches: number; productsPerSecond: number }>;
  analyzer: boolean;
  /** RSS once ready, before any ingestion (the vision model, when loaded, is most of it). */
  idleRssMiB: number;
  /**
   * Peak RSS by the first moment at least 100,000 products had been ingested (the issue's target
   * reads "while ingesting 100,000 products"); null when the run ingests fewer.
   */
  peakRssAt100k: { products: number; peakRssMiB: number } | null;
  /** Peak RSS over the whole run. */
  peakRssMiB: number;
  productsIngested: number;
}

/** Products after which the peak RSS is noted apart (the RSS target's volume). */
const RSS_TARGET_PRODUCTS = 100_000;

/** How often each status poller asks. */
const POLL_INTERVAL_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `pollers` clients reading a batch's status for `seconds`, each once per `intervalMs` (0: back to
 * back, the next request as soon as the last answer is in). Pollers start spread over one interval,
 * as independent clients would.
 */
async function pollStatus(
  client: BenchClient,
  batchId: () => string,
  { pollers, seconds, intervalMs }: { pollers: number; seconds: number; intervalMs: number },
) {
  const latencies: number[] = [];
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const until = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      Array.from({ length: pollers }, async (_, p) => {
        let next = performance.now() + (intervalMs * p) / pollers;
        while (next < until) {
          const wait = next - performance.now();
          if (wait > 0) await sleep(wait);
          latencies.push((await client.status(batchId())).ms);
          next = intervalMs === 0 ? performance.now() : next + intervalMs;
        }
      }),
    );
  } finally {
    loopDelay.disable();
  }
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    n: latencies.length,
    pollers,
    requestsPerSecond: latencies.length / seconds,
    clientLoopDelayMs: { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 },
  };
}

/** A repeat's phases, in the order they run. */
export const PHASES = ['fresh', 'update', 'resend'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * A repeat's three phases, `batches` each: a fresh catalog, an update of the same products (new
 * prices and names), and the first batch's 1000 products sent again and again, new prices each time.
 */
export function repeatBatches(prefix: string, batches: number): Record<Phase, unknown[][]> {
  return {
    fresh: Array.from({ length: batches }, (_, b) => generateBatch(prefix, b)),
    update: Array.from({ length: batches }, (_, b) => generateBatch(prefix, b, { generation: 1 })),
    resend: Array.from({ length: batches }, (_, g) => generateBatch(prefix, 0, { generation: 2 + g })),
  };
}

/**
 * The ratios are with history on (CONTRACT §11.3): after a repeat's update phase, a product of its
 * batches has its create and its update, newest first.
 */
export async function assertHistoryRecorded(client: BenchClient, prefix: string): Promise<void> {
  const recorded = await client.historyActions(`${prefix}-p0`);
  if (recorded.join() !== 'update,create') throw new Error(`history of ${prefix}-p0: ${recorded.join()}`);
}

/**
 * Submits pre-serialized batches one after another, waits for all to be terminal; products/s.
 * `span` (the CPU meter, bench/machine-load.ts) marks the timed part.
 */
export async function endToEnd(client: BenchClient, bodies: string[], latencies: number[], span?: TimedSpan) {
  span?.start();
  const started = performance.now();
  const ids: string[] = [];
  for (const body of bodies) {
    const { batchId, ms } = await client.submit(body);
    latencies.push(ms);
    ids.push(batchId);
  }
  const records = await client.waitTerminal(ids);
  const seconds = (performance.now() - started) / 1000;
  span?.end();
  for (const r of records) {
    if (r.status !== 'completed') throw new Error(`batch ended ${String(r.status)}: ${JSON.stringify(r)}`);
  }
  return (bodies.length * BATCH) / seconds;
}

/**
 * Runs the whole ingestion benchmark against one database kind; on a server, the service in a
 * database of its own, dropped however the run ends.
 */
export async function benchIngestion(options: IngestionBenchOptions): Promise<IngestionBenchResult> {
  const database = options.databaseUrl
    ? await createBenchDatabase(
        options.databaseUrl,
        options.databaseUrl,
        `bench_${process.pid}_${Date.now() % 100000}`,
      )
    : null;
  try {
    return await benchIngestionOn(options, database?.url);
  } finally {
    await database?.drop();
  }
}

/** The benchmark, its service on `serviceDatabaseUrl` (none: embedded). */
async function benchIngestionOn(
  options: IngestionBenchOptions,
  serviceDatabaseUrl: string | undefined,
): Promise<IngestionBenchResult> {
  const { log } = options;
  const serviceEnv: Record<string, string> = serviceDatabaseUrl ? { DATABASE_URL: serviceDatabaseUrl } : {};
  if (!options.analyzer) serviceEnv.ANALYSIS_ENABLED = 'false';
  const webhooks = options.webhook ? await startBenchWebhooks() : null;
  if (webhooks) serviceEnv.WEBHOOK_ALLOW_PRIVATE_HOSTS = 'true';
  const service = await startServiceProcess(serviceEnv, options.serviceNodeArgs);
  const idleRssMiB = service.rssMiB();
  const baseline = await openBaseline(options.databaseUrl);
  const submitLatencies: number[] = [];
  const submitUnderPolling: number[] = [];
  let ingested = 0;
  let peakRssAt100k: IngestionBenchResult['peakRssAt100k'] = null;
  const countIngested = (products: number) => {
    ingested += products;
    if (peakRssAt100k === null && ingested >= RSS_TARGET_PRODUCTS)
      peakRssAt100k = { products: ingested, peakRssMiB: service.peakRssMiB() };
  };
  const clients: BenchClient[] = [];
  const clientFor = async (tenant: string) => {
    const client = await createBenchClient(service.baseUrl, service.secret, tenant);
    clients.push(client);
    await webhooks?.register(service.baseUrl, service.secret, tenant);
    return client;
  };
  try {
    const fresh = noFigures();
    const update = noFigures();
    const resend = noFigures();
    const repeats = options.warmUpRepeats + options.repeats;
    for (let r = 0; r < repeats; r++) {
      const warmUp = r < options.warmUpRepeats;
      const prefix = `r${r}-${randomUUID().slice(0, 8)}`;
      const {
        fresh: batches,
        update: updates,
        resend: resends,
      } = repeatBatches(prefix, options.batchesPerRun);
      const client = await clientFor(`bench-${prefix}`);
      /**
       * One phase of a repeat: the batches upserted straight into the database, then through the
       * service (serialized before its timing starts), each after autovacuum has settled.
       */
      const phase = async (figures: RunFigures, items: unknown[][], latencies: number[]) => {
        const products = items.length * BATCH;
        const baseCpu = cpuSpan([service.pid]);
        await baseline.settle();
        const base = products / (await baseline.run(items, `base-${prefix}`, baseCpu));
        const bodies = items.map((batch) => JSON.stringify({ items: batch }));
        const e2eCpu = cpuSpan([service.pid]);
        await baseline.settle();
        const e2e = await endToEnd(client, bodies, latencies, e2eCpu);
        if (!warmUp) {
          figures.baseline.push(base);
          figures.endToEnd.push(e2e);
          figures.ratio.push(e2e / base);
          figures.baselineCpu.push(baseCpu.use(products));
          figures.endToEndCpu.push(e2eCpu.use(products));
        }
        return `${e2e.toFixed(0)}/s vs baseline ${base.toFixed(0)}/s`;
      };

      // A warm-up's submissions are a cold service's: they are not counted either.
      const latencies = warmUp ? [] : submitLatencies;
      const freshLine = await phase(fresh, batches, latencies);
      const updateLine = await phase(update, updates, latencies);
      await assertHistoryRecorded(client, prefix);
      // Its submissions are not counted with the others, so that figure stays comparable.
      const resendLine = await phase(resend, resends, []);
      countIngested(3 * options.batchesPerRun * BATCH);
      log(
        `${warmUp ? 'warm-up' : `repeat ${r + 1 - options.warmUpRepeats}/${options.repeats}`}: ` +
          `fresh ${freshLine}; update ${updateLine}; resend ${resendLine}`,
      );
    }

    // Status reads while the worker is busy: a batch is submitted as soon as the one before the
    // last is done, so the worker always has work, and the pollers read the newest batch's status.
    const prefix = `poll-${randomUUID().slice(0, 8)}`;
    const pollClient = await clientFor(`bench-${prefix}`);
    const busyBodies = Array.from({ length: 4 }, (_, b) =>
      JSON.stringify({ items: generateBatch(prefix, b) }),
    );
    const busyIds: string[] = [];
    let polling = true;
    const busy = (async () => {
      for (let i = 0; polling; i++) {
        const { batchId, ms } = await pollClient.submit(busyBodies[i % busyBodies.length]!);
        submitUnderPolling.push(ms);
        busyIds.push(batchId);
        if (i > 0) await pollClient.waitTerminal([busyIds[i - 1]!]);
      }
    })();
    // A failed submission ends the polling too, and is thrown below once the pollers stop.
    const failed = busy.then(
      () => null,
      (error: unknown) => {
        polling = false;
        return error;
      },
    );
    while (busyIds.length === 0 && polling) await sleep(10);
    const toError = (e: unknown) => (e instanceof Error ? e : new Error(String(e)));
    if (busyIds.length === 0) throw toError(await failed);
    const newest = () => busyIds.at(-1)!;
    const paced = await pollStatus(pollClient, newest, {
      pollers: options.pollers,
      seconds: options.pollSeconds,
      intervalMs: POLL_INTERVAL_MS,
    });
    const saturated = await pollStatus(pollClient, newest, {
      pollers: options.pollers,
      seconds: options.saturationSeconds,
      intervalMs: 0,
    });
    polling = false;
    const error = await failed;
    if (error) throw toError(error);
    await pollClient.waitTerminal(busyIds);
    countIngested(busyIds.length * BATCH);
    // The same pollers with nothing else running: the API's own latency, without the worker and
    // PostgreSQL's upserts competing for the machine's cores.
    await baseline.settle();
    const idle = await pollStatus(pollClient, newest, {
      pollers: options.pollers,
      seconds: options.pollSeconds,
      intervalMs: POLL_INTERVAL_MS,
    });

    // Throughput as the stored catalog grows, for one tenant whose catalog is filled through the service.
    const growth: IngestionBenchResult['growth'] = [];
    const gPrefix = `grow-${randomUUID().slice(0, 8)}`;
    const gClient = await clientFor(`bench-${gPrefix}`);
    let stored = 0;
    for (const level of options.growthLevels) {
      const fill: string[] = [];
      for (; stored < level; stored++) fill.push(JSON.stringify({ items: generateBatch(gPrefix, stored) }));
      if (fill.length) await endToEnd(gClient, fill, []);
      const measured = Array.from({ length: options.growthBatches }, (_, i) =>
        JSON.stringify({ items: generateBatch(gPrefix, 1_000_000 + level * 100 + i) }),
      );
      // Filling the catalog leaves autovacuum work behind; let it finish, as before the other phases.
      await baseline.settle();
      const productsPerSecond = await endToEnd(gClient, measured, []);
      growth.push({ storedBatches: level, productsPerSecond });
      countIngested((fill.length + measured.length) * BATCH);
      log(`catalog ${level}× batch volume: ${productsPerSecond.toFixed(0)} products/s`);
    }

    return {
      database: options.databaseUrl ? 'server' : 'embedded',
      webhooks: webhooks?.figures() ?? null,
      serviceCommand: service.command,
      productsPerBatch: BATCH,
      fresh: fresh,
      update,
      resend,
      submitLatencyMs: {
        p50: percentile(submitLatencies, 50),
        p99: percentile(submitLatencies, 99),
        n: submitLatencies.length,
      },
      submitUnderPollingLatencyMs: {
        p50: percentile(submitUnderPolling, 50),
        p99: percentile(submitUnderPolling, 99),
        n: submitUnderPolling.length,
      },
      statusLatencyMs: {
        p50: paced.p50,
        p99: paced.p99,
        n: paced.n,
        pollers: paced.pollers,
        clientLoopDelayMs: paced.clientLoopDelayMs,
        intervalMs: POLL_INTERVAL_MS,
      },
      statusIdleLatencyMs: {
        p50: idle.p50,
        p99: idle.p99,
        n: idle.n,
        pollers: idle.pollers,
        clientLoopDelayMs: idle.clientLoopDelayMs,
        intervalMs: POLL_INTERVAL_MS,
      },
      statusSaturation: {
        p50: saturated.p50,
        p99: saturated.p99,
        n: saturated.n,
        pollers: saturated.pollers,
        clientLoopDelayMs: saturated.clientLoopDelayMs,
        requestsPerSecond: saturated.requestsPerSecond,
      },
      growth,
      analyzer: options.analyzer,
      idleRssMiB,
      peakRssAt100k,
      peakRssMiB: service.peakRssMiB(),
      productsIngested: ingested,
    };
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    await baseline.close();
    await service.stop();
    await webhooks?.close();
  }
}
