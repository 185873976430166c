/**
 * `npm run soak [-- --seconds N]`: fairness under a flood. One tenant floods 1000-item batches
 * (autocannon, far past MAX_PENDING_ITEMS, so 429s are expected) while ten quiet tenants each
 * submit a small batch every few seconds. Prints the quiet tenants' time from 202 to terminal next
 * to the same figure without the flood, the flooding tenant's throughput next to its throughput
 * alone, per-endpoint latencies, error rates and each process's peak RSS. Bounded: about 4 minutes
 * with the default 45 s phases. docs/reliability-tools.md records the figures.
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { product } from '../test/helpers/catalog-fixtures.ts';
import { signToken } from '../test/helpers/process-service.ts';
import { TERMINAL } from '../test/helpers/assertions.ts';
import { startCluster } from './cluster.ts';
import { startPrivatePostgres } from './private-postgres.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '45' } } });
const PHASE_MS = Number(args.seconds) * 1000;
const QUIET_TENANTS = 10;
const QUIET_ITEMS = 20;
const QUIET_EVERY_MS = 3_000;
/** Set low for the run so the flood meets the backlog limit within seconds (default 200000). */
const MAX_PENDING_ITEMS = 20_000;
/**
 * Twice what one worker writes on a quiet machine (~20 batches/s), so the backlog limit answers 429
 * whatever the load; at 20/s a quiet machine kept up and the flood never met the limit.
 */
const FLOOD_RATE_PER_S = 40;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const say = (line: string) => console.log(line);

/** The `p`-th percentile (0–100) of `values`, nearest rank. */
function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const ms = (value: number) => `${Math.round(value)} ms`;

/** Latencies and failures of one endpoint as the quiet tenants saw it. */
interface Endpoint {
  latencies: number[];
  errors: number;
}

async function main(): Promise<number> {
  const postgres = await startPrivatePostgres();
  const cluster = await startCluster({
    databaseUrl: postgres.url,
    apis: 1,
    workers: 1,
    env: {
      WORKER_POLL_MS: '500',
      RATE_LIMIT_PER_MINUTE: '100000',
      MAX_PENDING_ITEMS: String(MAX_PENDING_ITEMS),
      LOG_LEVEL: 'error',
    },
  }).catch(async (error: unknown) => {
    await postgres.destroy();
    throw error;
  });
  try {
    const base = cluster.apis[0]!.baseUrl;
    const quietTokens = await Promise.all(
      Array.from({ length: QUIET_TENANTS }, (_, i) => signToken(cluster.secret, `quiet-${i}`)),
    );
    const endpoints = {
      submit: { latencies: [], errors: 0 },
      status: { latencies: [], errors: 0 },
    } as Record<'submit' | 'status', Endpoint>;
    const timed = async (endpoint: Endpoint, url: string, init: RequestInit) => {
      const start = performance.now();
      const res = await fetch(url, init);
      const body = (await res.json()) as Record<string, unknown>;
      endpoint.latencies.push(performance.now() - start);
      if (res.status >= 400) endpoint.errors++;
      return { status: res.status, body };
    };

    /** Quiet tenants for `durationMs`: each batch's time from its 202 to a terminal status. */
    const quietPhase = async (durationMs: number) => {
      const until = Date.now() + durationMs;
      const times: number[] = [];
      await Promise.all(
        quietTokens.map(async (token, i) => {
          await sleep((i * QUIET_EVERY_MS) / QUIET_TENANTS);
          const headers = { authorization: `Bearer ${token}` };
          while (Date.now() < until) {
            const next = Date.now() + QUIET_EVERY_MS;
            const items = Array.from({ length: QUIET_ITEMS }, () => product());
            const submitted = await timed(endpoints.submit, `${base}/products/ingestions`, {
              method: 'POST',
              headers: { ...headers, 'content-type': 'application/json' },
              body: JSON.stringify({ items }),
            });
            if (submitted.status !== 202) continue;
            const accepted = performance.now();
            for (;;) {
              const { body } = await timed(
                endpoints.status,
                `${base}/products/ingestions/${String(submitted.body.batch_id)}`,
                {
                  headers,
                },
              );
              if (TERMINAL.has(String(body.status))) break;
              await sleep(100);
            }
            times.push(performance.now() - accepted);
            await sleep(Math.max(0, next - Date.now()));
          }
        }),
      );
      return times;
    };

    const floodToken = await signToken(cluster.secret, 'flood');
    const floodBody = JSON.stringify({ items: Array.from({ length: 1000 }, () => product()) });
    /** The items the flooding tenant has had written so far (its batches' `upserted`, summed). */
    const floodUpserted = async () => {
      let total = 0;
      let cursor: string | null = null;
      do {
        const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const res = await fetch(`${base}/products/ingestions?limit=100${query}`, {
          headers: { authorization: `Bearer ${floodToken}` },
        });
        const page = (await res.json()) as { data: Array<{ upserted: number }>; next_cursor: string | null };
        total += page.data.reduce((sum, b) => sum + b.upserted, 0);
        cursor = page.next_cursor;
      } while (cursor);
      return total;
    };
    const flood = (durationMs: number) =>
      autocannon({
        url: `${base}/products/ingestions`,
        method: 'POST',
        headers: { authorization: `Bearer ${floodToken}`, 'content-type': 'application/json' },
        body: floodBody,
        connections: 2,
        overallRate: FLOOD_RATE_PER_S,
        duration: durationMs / 1000,
      });
    /** The flood for `durationMs`, and the items its tenant got written meanwhile, per second. */
    const floodPhase = async (durationMs: number, alongside: Promise<number[]> | null) => {
      const before = await floodUpserted();
      const started = performance.now();
      const [result, quiet] = await Promise.all([flood(durationMs), alongside]);
      const itemsPerS = ((await floodUpserted()) - before) / ((performance.now() - started) / 1000);
      return { result, quiet, itemsPerS };
    };

    say(
      `soak: 1 API + 1 worker process (WORKER_CONCURRENCY 2), MAX_PENDING_ITEMS=${MAX_PENDING_ITEMS}, phases of ${PHASE_MS / 1000} s`,
    );
    const calm = await quietPhase(PHASE_MS);
    say(`  phase 1, quiet tenants alone: ${calm.length} batches`);
    const alone = await floodPhase(PHASE_MS, null);
    say(`  phase 2, flood alone: ${Math.round(alone.itemsPerS)} items/s written`);
    // Let the backlog of phase 2 drain a little, so phase 3 starts from the same limit, not above it.
    await sleep(2_000);
    const both = await floodPhase(PHASE_MS, quietPhase(PHASE_MS));
    const stormy = both.quiet!;
    say(`  phase 3, flood and quiet tenants together: ${stormy.length} quiet batches`);

    const codes = (r: autocannon.Result) =>
      Object.entries(r.statusCodeStats as Record<string, { count: number }>)
        .map(([code, { count }]) => `${code}×${count}`)
        .join(' ');
    const rows: Array<[string, string]> = [
      [
        'quiet 202→terminal, no flood: p50 / p99',
        `${ms(percentile(calm, 50))} / ${ms(percentile(calm, 99))}`,
      ],
      [
        'quiet 202→terminal, flood: p50 / p99',
        `${ms(percentile(stormy, 50))} / ${ms(percentile(stormy, 99))}`,
      ],
      ['  p99 ratio (goal ≤ 3)', (percentile(stormy, 99) / percentile(calm, 99)).toFixed(2)],
      [
        'flood items/s alone / with quiet tenants',
        `${Math.round(alone.itemsPerS)} / ${Math.round(both.itemsPerS)}`,
      ],
      ['  ratio (goal ≥ 0.80)', (both.itemsPerS / alone.itemsPerS).toFixed(2)],
      [
        'flood POST (autocannon): submissions/s',
        `${(both.result.requests.total / (PHASE_MS / 1000)).toFixed(1)}`,
      ],
      ['flood POST answers', codes(both.result)],
      [
        'flood POST accepted items/s',
        `${Math.round((((both.result.statusCodeStats as Record<string, { count: number }>)['202']?.count ?? 0) * 1000) / (PHASE_MS / 1000))}`,
      ],
      ['flood POST latency p50 / p99', `${ms(both.result.latency.p50)} / ${ms(both.result.latency.p99)}`],
      ['flood POST errors / timeouts', `${both.result.errors} / ${both.result.timeouts}`],
      [
        'quiet POST latency p50 / p99',
        `${ms(percentile(endpoints.submit.latencies, 50))} / ${ms(percentile(endpoints.submit.latencies, 99))}`,
      ],
      [
        'quiet GET status latency p50 / p99',
        `${ms(percentile(endpoints.status.latencies, 50))} / ${ms(percentile(endpoints.status.latencies, 99))}`,
      ],
      [
        'quiet error rate (POST, GET)',
        `${endpoints.submit.errors}/${endpoints.submit.latencies.length}, ${endpoints.status.errors}/${endpoints.status.latencies.length}`,
      ],
      ...Object.entries(cluster.peakRss()).map(([name, mib]): [string, string] => [
        `peak RSS ${name}`,
        `${mib} MiB`,
      ]),
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) say(`${label.padEnd(width)}  ${value}`);
    const ratio = percentile(stormy, 99) / percentile(calm, 99);
    const share = both.itemsPerS / alone.itemsPerS;
    const failures = [
      ratio > 3 && `quiet p99 under the flood is ${ratio.toFixed(2)}× the calm one (goal ≤ 3×)`,
      share < 0.8 &&
        `the flood progressed at ${(share * 100).toFixed(0)} % of its throughput alone (goal ≥ 80 %)`,
      endpoints.submit.errors + endpoints.status.errors > 0 && 'quiet tenants got errors',
      both.result.errors + alone.result.errors > 0 && 'the flood got connection errors',
      Object.keys(both.result.statusCodeStats as object).some((c) => c !== '202' && c !== '429') &&
        'the flood got answers other than 202 and 429',
    ].filter((f): f is string => typeof f === 'string');
    for (const failure of failures) say(`MISSED ${failure}`);
    return failures.length === 0 ? 0 : 1;
  } finally {
    await cluster.stop();
    await postgres.destroy();
  }
}

process.exitCode = await main();
