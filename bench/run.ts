import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchIngestion, type IngestionBenchResult, type RunFigures } from './ingestion.ts';

/**
 * `npm run bench [-- --smoke] [-- --database-url URL]`: ingestion throughput end to end against the
 * same-run baseline, latencies, catalog growth and peak RSS. DATABASE_URL (or --database-url) picks
 * the PostgreSQL server; otherwise the embedded database. `--smoke` is a quick run for CI.
 */
const { values } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    'database-url': { type: 'string' },
    out: { type: 'string', default: 'bench/results/latest.json' },
  },
});

const databaseUrl = values['database-url'] ?? process.env.DATABASE_URL;
const smoke = values.smoke;
const log = (line: string) => process.stderr.write(`${line}\n`);

const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted.at(-1)! };
};

function table(result: IngestionBenchResult): string {
  const f = (n: number, d = 0) => n.toFixed(d);
  const row = (label: string, run: RunFigures) => {
    const e = stats(run.endToEnd);
    const b = stats(run.baseline);
    const r = stats(run.ratio);
    return `| ${label} | ${f(b.median)} | ${f(e.median)} (${f(e.min)}–${f(e.max)}) | ${f(r.median, 2)} (${f(r.min, 2)}–${f(r.max, 2)}) |`;
  };
  const first = result.growth[0]?.productsPerSecond ?? Number.NaN;
  return [
    `Ingestion on ${result.database} PostgreSQL, ${result.productsPerBatch} products × 3 variants × 3 images per batch`,
    '',
    '| run | baseline products/s (median) | end-to-end products/s median (min–max) | ratio median (min–max) |',
    '|---|---|---|---|',
    row('fresh catalog', result.fresh),
    row('update of the same products', result.update),
    '',
    `| latency | p50 ms | p99 ms | samples |`,
    '|---|---|---|---|',
    `| POST /products/ingestions (1000 items, worker busy) | ${f(result.submitLatencyMs.p50, 1)} | ${f(result.submitLatencyMs.p99, 1)} | ${result.submitLatencyMs.n} |`,
    `| GET status, ${result.statusLatencyMs.pollers} concurrent pollers | ${f(result.statusLatencyMs.p50, 1)} | ${f(result.statusLatencyMs.p99, 1)} | ${result.statusLatencyMs.n} |`,
    '',
    '| stored catalog (× batch volume) | products/s | vs 1× |',
    '|---|---|---|',
    ...result.growth.map(
      (g) => `| ${g.storedBatches}× | ${f(g.productsPerSecond)} | ${f(g.productsPerSecond / first, 2)} |`,
    ),
    '',
    `Peak RSS of the service: ${f(result.peakRssMiB)} MiB after ${result.productsIngested} products.`,
  ].join('\n');
}

const result = await benchIngestion({
  databaseUrl,
  batchesPerRun: smoke ? 2 : 5,
  repeats: smoke ? 1 : 3,
  growthLevels: smoke ? [1, 2] : [1, 10, 100],
  growthBatches: smoke ? 1 : 3,
  pollers: smoke ? 5 : 50,
  pollSeconds: smoke ? 1 : 5,
  log,
});

process.stdout.write(`${table(result)}\n`);
const out = path.resolve(values.out);
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(
  out,
  `${JSON.stringify({ date: new Date().toISOString(), smoke, ingestion: result }, null, 2)}\n`,
);
process.stdout.write(`figures written to ${path.relative(process.cwd(), out)}\n`);
