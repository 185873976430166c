import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  benchIngestion,
  PHASES,
  type Phase,
  type IngestionBenchOptions,
  type IngestionBenchResult,
  type PollFigures,
  type RunFigures,
} from './ingestion.ts';
import { benchPooledAgainstDirect, type PooledPhaseFigures } from './pooled-ingestion.ts';
import { benchPreview, type PreviewBenchResult } from './preview.ts';
import { benchExport, EXPORT_FORMS, type ExportForm } from './export.ts';
import { benchFileImport } from './file-import.ts';
import { CATALOG_FILE_FORMATS, type CatalogFileFormat } from './catalog-files.ts';
import { benchSearch } from './search.ts';
import { benchReplicaExport, type ReplicaExportBenchResult } from './replica-export.ts';
import { exportLines, importLines, cpuLines, searchLines, stats } from './tables.ts';
import { benchArgErrors, partsToRun, unreachable, usesServer, type BenchPart } from './options.ts';

/**
 * `npm run bench [-- --smoke] [-- --database-url URL [-- --pooled-url URL]] [-- --only ingestion|preview|import|export|search|analysis|decode|replica] [-- --no-analyzer] [-- --webhook]
 *  [-- --repeats N] [-- --formats csv,xlsx] [-- --import-batches N] [-- --service-node-args="--max-semi-space-size=8 --cpu-prof"] (with "=": the value starts with a dash)`:
 * ingestion throughput end to end against the same-run baseline, latencies, catalog growth and RSS,
 * then a 1000-item preview against the 202 of the same submission (bench/preview.ts), then files
 * imported through the command-line client, CSV and XLSX against JSONL (bench/file-import.ts), then
 * the NDJSON, CSV and XLSX exports of 100,000 stored products with the service's RSS
 * (bench/export.ts), then the catalog search's latency on 100,000 products on the embedded database
 * and, given a server, on it too (bench/search.ts), then the analyzer's latency and throughput
 * (bench/analysis.ts) and its decode memory budget (bench/decode-memory.ts). DATABASE_URL (or
 * --database-url) picks the PostgreSQL server; otherwise the embedded database. `--smoke` is a
 * quick run for CI. `--formats` narrows the import and export runs to those forms (JSONL is always
 * imported, as the reference); `--import-batches` sets the products per import run, in thousands.
 * The service runs under the Node.js options of `npm start`'s script, then those of
 * `--service-node-args` (for a V8 flag given twice, the later wins). `--webhook` registers one
 * webhook endpoint per bench tenant, on a loopback receiver, to compare the ratios with webhooks on.
 * `--pooled-url` (with a server) then runs a service behind that PgBouncer in transaction pooling
 * mode (`.ci/start-pgbouncer` starts one) beside a direct one, taking turns on the same batches
 * (bench/pooled-ingestion.ts), and prints pooled against direct.
 * `--only replica` (only when named: it builds a PostgreSQL primary and streaming standby of its own,
 * bench/replica-export.ts) times ingestion alone and beside 100,000-product exports read from the
 * primary, then from the replica (DATABASE_READ_URL).
 * The figures of every part that ran are written as JSON to `--out` (bench/results/latest.json).
 */
const { values } = (() => {
  try {
    return parseArgs({
      options: {
        smoke: { type: 'boolean', default: false },
        'no-analyzer': { type: 'boolean', default: false },
        webhook: { type: 'boolean', default: false },
        only: { type: 'string' },
        'database-url': { type: 'string' },
        'pooled-url': { type: 'string' },
        out: { type: 'string', default: 'bench/results/latest.json' },
        'service-node-args': { type: 'string', default: '' },
        repeats: { type: 'string' },
        formats: { type: 'string' },
        'import-batches': { type: 'string' },
      },
    });
  } catch (error) {
    // An unknown option, or one without its value.
    return refuse([(error as Error).message]);
  }
})();

/** Stops the bench before anything runs, one line per mistake on the command line (exit code 2). */
function refuse(errors: string[]): never {
  for (const error of errors) process.stderr.write(`bench: ${error}\n`);
  process.exit(2);
}

// An empty value is none, as the service reads DATABASE_URL: the embedded database.
const databaseUrl = values['database-url'] || process.env.DATABASE_URL || undefined;
const smoke = values.smoke;
const log = (line: string) => process.stderr.write(`${line}\n`);

const serviceNodeArgs = values['service-node-args'].split(' ').filter(Boolean);

/** A phase as the tables name it. */
const PHASE_LABELS: Record<Phase, string> = { fresh: 'fresh', update: 'update', resend: 'resent' };

// The command line is checked, then the servers the run will use are asked for `SELECT 1`,
// before anything runs (bench/options.ts).
const argErrors = benchArgErrors(values, databaseUrl);
if (argErrors.length > 0) refuse(argErrors);
const unanswered: string[] = [];
for (const [option, url] of [
  ['--database-url', usesServer(values.only) ? databaseUrl : undefined],
  ['--pooled-url', values['pooled-url']],
] as const) {
  const reason = url ? await unreachable(option, url) : null;
  if (reason) unanswered.push(reason);
}
if (unanswered.length > 0) refuse(unanswered);

/** The forms `--formats` names (default: all of `known`; checked at start). */
function formatsOption<T extends string>(known: readonly T[]): T[] {
  if (values.formats === undefined) return [...known];
  const asked = values.formats.split(',');
  return known.filter((form) => asked.includes(form));
}

/**
 * Every part's figures, written to `--out` after each part: a part that fails later leaves those
 * before it recorded.
 */
const results: Record<string, unknown> = { date: new Date().toISOString(), smoke };
function record(part: string, figures: unknown): void {
  results[part] = figures;
  const out = path.resolve(values.out);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
}

function table(result: IngestionBenchResult): string {
  const f = (n: number, d = 0) => n.toFixed(d);
  const row = (label: string, run: RunFigures) => {
    const e = stats(run.endToEnd);
    const b = stats(run.baseline);
    const r = stats(run.ratio);
    return `| ${label} | ${f(b.median)} | ${f(e.median)} (${f(e.min)}–${f(e.max)}) | ${f(r.median, 2)} (${f(r.min, 2)}–${f(r.max, 2)}) |`;
  };
  const first = result.growth[0]?.productsPerSecond ?? Number.NaN;
  const loop = ({ clientLoopDelayMs: d }: PollFigures) => `${f(d.p99, 1)} / ${f(d.max, 1)} ms`;
  return [
    `Ingestion on ${result.database} PostgreSQL, ${result.productsPerBatch} products × 3 variants × 3 images per batch`,
    `(the service run as \`${result.serviceCommand}\`)`,
    ...(result.webhooks
      ? [
          `With webhooks: ${result.webhooks.endpoints} endpoints (one per tenant) on a loopback receiver, ` +
            `${result.webhooks.deliveries} deliveries received.`,
        ]
      : []),
    '',
    '| run | baseline products/s (median) | end-to-end products/s median (min–max) | ratio median (min–max) |',
    '|---|---|---|---|',
    row('fresh catalog (history on: a create entry per product)', result.fresh),
    row('update of the same products (history on: an update entry per product)', result.update),
    row('the same 1000 products, sent again batch after batch (history on)', result.resend),
    '',
    `| latency | p50 ms | p99 ms | samples |`,
    '|---|---|---|---|',
    `| POST /products/ingestions (1000 items, worker busy) | ${f(result.submitLatencyMs.p50, 1)} | ${f(result.submitLatencyMs.p99, 1)} | ${result.submitLatencyMs.n} |`,
    `| POST /products/ingestions, worker busy and the pollers below polling | ${f(result.submitUnderPollingLatencyMs.p50, 1)} | ${f(result.submitUnderPollingLatencyMs.p99, 1)} | ${result.submitUnderPollingLatencyMs.n} |`,
    `| GET status, ${result.statusLatencyMs.pollers} pollers each every ${result.statusLatencyMs.intervalMs} ms, worker busy | ${f(result.statusLatencyMs.p50, 1)} | ${f(result.statusLatencyMs.p99, 1)} | ${result.statusLatencyMs.n} |`,
    `| GET status, the same ${result.statusSaturation.pollers} back to back, worker busy (${f(result.statusSaturation.requestsPerSecond)} requests/s) | ${f(result.statusSaturation.p50, 1)} | ${f(result.statusSaturation.p99, 1)} | ${result.statusSaturation.n} |`,
    `| GET status, the same ${result.statusIdleLatencyMs.pollers} every ${result.statusIdleLatencyMs.intervalMs} ms, worker idle | ${f(result.statusIdleLatencyMs.p50, 1)} | ${f(result.statusIdleLatencyMs.p99, 1)} | ${result.statusIdleLatencyMs.n} |`,
    '',
    `The bench client's own event-loop delay while its pollers polled, p99 / max: ` +
      `${loop(result.statusLatencyMs)} worker busy, ${loop(result.statusSaturation)} back to back, ` +
      `${loop(result.statusIdleLatencyMs)} worker idle (part of each status latency above is the client waiting for its turn).`,
    '',
    '| stored catalog (× batch volume) | products/s | vs 1× |',
    '|---|---|---|',
    ...result.growth.map(
      (g) => `| ${g.storedBatches}× | ${f(g.productsPerSecond)} | ${f(g.productsPerSecond / first, 2)} |`,
    ),
    '',
    `Service RSS: ${f(result.idleRssMiB)} MiB when ready${result.analyzer ? ' (vision model loaded)' : ' (ANALYSIS_ENABLED=false)'}, ` +
      (result.peakRssAt100k
        ? `peak ${f(result.peakRssAt100k.peakRssMiB)} MiB by ${result.peakRssAt100k.products} products, `
        : '') +
      `peak ${f(result.peakRssMiB)} MiB after ${result.productsIngested} products ` +
      `(ingestion added ${f(result.peakRssMiB - result.idleRssMiB)} MiB).`,
  ].join('\n');
}

/** Runs a bench part in a process of its own, so that its threads and RSS are its own. */
function runInOwnProcess(script: string): void {
  const child = spawnSync(process.execPath, ['--import', 'tsx', script, ...(smoke ? ['--smoke'] : [])], {
    stdio: 'inherit',
  });
  if (child.status !== 0) process.exitCode = child.status ?? 1;
}

/** What runs each part; `partsToRun` (bench/options.ts) says which parts run, and in what order. */
const PART_RUNNERS: Record<BenchPart, () => Promise<void> | void> = {
  ingestion: runIngestion,
  preview: runPreview,
  import: runImport,
  export: runExport,
  search: runSearch,
  // The analyzer's model threads, and the decode memory budget (bench/decode-memory.ts).
  analysis: () => runInOwnProcess('bench/analysis.ts'),
  decode: () => runInOwnProcess('bench/decode-memory.ts'),
  replica: runReplicaExport,
};
for (const part of partsToRun(values.only)) await PART_RUNNERS[part]();

/** The ingestion bench's options for this command line: the direct run's, or with `overrides`. */
function ingestionOptions(overrides: Partial<IngestionBenchOptions> = {}): IngestionBenchOptions {
  return {
    databaseUrl,
    batchesPerRun: smoke ? 2 : 10,
    // Five: the repeats of one run spread by up to 0.3 on this two-core machine, and the median of
    // three moved by as much from run to run (docs/performance.md).
    repeats: values.repeats ? Number(values.repeats) : smoke ? 1 : 5,
    warmUpRepeats: smoke ? 0 : 1,
    growthLevels: smoke ? [1, 2] : [1, 10, 100],
    // As many as an end-to-end run: 5 batches (≈ 1 s) let one slow spell of the machine move a level by a third.
    growthBatches: smoke ? 1 : 20,
    pollers: smoke ? 5 : 50,
    pollSeconds: smoke ? 1 : 5,
    saturationSeconds: smoke ? 1 : 3,
    analyzer: !values['no-analyzer'],
    serviceNodeArgs,
    webhook: values.webhook,
    log,
    ...overrides,
  };
}

async function runIngestion(): Promise<void> {
  const result = await benchIngestion(ingestionOptions());

  process.stdout.write(`${table(result)}\n\n`);
  const cpuRows = PHASES.flatMap((phase) => {
    const { baselineCpu, endToEndCpu } = result[phase];
    const run = PHASE_LABELS[phase];
    return [
      { run, side: 'baseline', uses: baselineCpu },
      { run, side: 'end to end', uses: endToEndCpu, against: { side: 'baseline', uses: baselineCpu } },
    ];
  });
  process.stdout.write(`${cpuLines(cpuRows)}\n`);
  record('ingestion', result);
  process.stdout.write(`figures written to ${values.out}\n`);
  if (values['pooled-url']) await runPooledIngestion();
}

/**
 * `--pooled-url`: the service through a transaction-pooling PgBouncer (docs/deployment.md) against
 * the service connected directly, the two side by side in one run, taking turns phase by phase
 * (bench/pooled-ingestion.ts), each also against the direct baseline of the same batches.
 */
async function runPooledIngestion(): Promise<void> {
  log('ingestion through the pooler against direct, side by side');
  const options = ingestionOptions();
  const pooled = await benchPooledAgainstDirect({
    // Both checked at start (bench/options.ts): the pooled URL comes with a server's.
    directUrl: databaseUrl!,
    pooledUrl: values['pooled-url']!,
    batchesPerRun: options.batchesPerRun,
    repeats: options.repeats,
    warmUpRepeats: options.warmUpRepeats,
    analyzer: options.analyzer,
    webhook: options.webhook,
    serviceNodeArgs,
    log,
  });
  record('ingestionPooled', pooled);
  const f = (n: number) => n.toFixed(2);
  const spread = (figures: number[]) => {
    const s = stats(figures);
    return `${f(s.median)} (${f(s.min)}–${f(s.max)})`;
  };
  const row = (label: string, p: PooledPhaseFigures) => {
    const against = (side: number[]) => side.map((pace, i) => pace / p.baseline[i]!);
    return `| ${label} | ${spread(against(p.direct))} | ${spread(against(p.pooled))} | ${spread(p.pooledOverDirect)} |`;
  };
  process.stdout.write(
    [
      '',
      'Ingestion through PgBouncer (transaction pooling) against direct, side by side, taking turns; medians (min–max) of the repeats',
      '',
      '| run | direct / baseline | pooled / baseline | pooled / direct |',
      '|---|---|---|---|',
      ...PHASES.map((phase) => row(PHASE_LABELS[phase], pooled[phase])),
      '',
      cpuLines(
        PHASES.flatMap((phase) => {
          const { cpu } = pooled[phase];
          const run = PHASE_LABELS[phase];
          return [
            { run, side: 'baseline', uses: cpu.baseline },
            { run, side: 'direct', uses: cpu.direct, against: { side: 'baseline', uses: cpu.baseline } },
            { run, side: 'pooled', uses: cpu.pooled, against: { side: 'direct', uses: cpu.direct } },
          ];
        }),
      ),
      '',
    ].join('\n'),
  );
}

function previewLines(result: PreviewBenchResult): string {
  const f = (n: number) => n.toFixed(1);
  const row = (label: string, x: PreviewBenchResult['previewMs']) =>
    `| ${label} | ${f(x.p50)} | ${f(x.min)}–${f(x.max)} | ${x.n} |`;
  return [
    `Preview on ${result.database} PostgreSQL: ${result.items} items (updates of stored products, 3 variants × 3 images), worker idle`,
    '',
    '| request | median ms | min–max ms | samples |',
    '|---|---|---|---|',
    row(`POST /products/ingestions/preview (${result.items} items)`, result.previewMs),
    row(`POST /products/ingestions, its 202 (${result.items} items)`, result.submitMs),
    '',
    `preview / 202 (medians): ${result.ratio.toFixed(2)} (target: below 2)`,
  ].join('\n');
}

async function runPreview(): Promise<void> {
  const result = await benchPreview({
    databaseUrl,
    repeats: smoke ? 3 : 15,
    serviceNodeArgs,
    log,
  });
  process.stdout.write(`\n${previewLines(result)}\n`);
  record('preview', result);
}

async function runImport(): Promise<void> {
  const result = await benchFileImport({
    databaseUrl,
    batches: values['import-batches'] ? Number(values['import-batches']) : smoke ? 2 : 20,
    repeats: values.repeats ? Number(values.repeats) : smoke ? 1 : 3,
    // JSONL, the reference, is imported whatever `--formats` says.
    formats: formatsOption<CatalogFileFormat>(CATALOG_FILE_FORMATS.filter((form) => form !== 'jsonl')),
    serviceNodeArgs,
    log,
  });
  process.stdout.write(`\n${importLines(result)}\n`);
  record('import', result);
}

async function runExport(): Promise<void> {
  const result = await benchExport({
    databaseUrl,
    batches: smoke ? 2 : 100,
    repeats: values.repeats ? Number(values.repeats) : smoke ? 1 : 3,
    forms: formatsOption<ExportForm>(EXPORT_FORMS),
    serviceNodeArgs,
    log,
  });
  process.stdout.write(`\n${exportLines(result)}\n`);
  record('export', result);
}

async function runSearch(): Promise<void> {
  // 100,000 products, as §11.7's target; the smoke run stores 2,000 and searches a few times. The
  // target is the server's, and the embedded database is measured as well (the issue asks for both).
  const searched = [];
  for (const url of databaseUrl ? [databaseUrl, undefined] : [undefined]) {
    const result = await benchSearch({
      databaseUrl: url,
      batches: smoke ? 2 : 100,
      searches: smoke ? 5 : 100,
      serviceNodeArgs,
      log,
    });
    process.stdout.write(`\n${searchLines(result)}\n`);
    searched.push(result);
  }
  record('search', searched);
}

function replicaLines(result: ReplicaExportBenchResult): string {
  const f = (n: number, d = 0) => n.toFixed(d);
  const median = (values: number[]) => stats(values).median;
  const range = (values: number[]) =>
    `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`;
  return [
    `Ingestion of fresh batches (${result.batchesPerRun} × 1000 products × 3 variants × 3 images) beside NDJSON ` +
      `exports of ${result.storedProducts} stored products, back to back; primary and streaming standby on this machine`,
    '',
    '| exports read from | end to end alone, products/s median (min–max) | end to end with exports | with / alone | worker busy time alone, products/s | worker busy time with exports | with / alone | service CPU s / 1000 products, alone → with | exports finished, products/s median | replica reads by outcome |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...result.runs.map(
      (run) =>
        `| ${run.exportsFrom} | ${range(run.alone)} | ${range(run.withExports)} | ${f(median(run.withExports) / median(run.alone), 2)} | ` +
        `${range(run.busy.alone)} | ${range(run.busy.withExports)} | ${f(median(run.busy.withExports) / median(run.busy.alone), 2)} | ` +
        `${f(median(run.serviceCpuPer1000.alone), 2)} → ${f(median(run.serviceCpuPer1000.withExports), 2)} | ` +
        `${run.exports.count}, ${f(median(run.exports.productsPerSecond))} | ` +
        `${
          Object.entries(run.replicaReads)
            .map(([outcome, n]) => `${outcome} ${n}`)
            .join(', ') || '—'
        } |`,
    ),
  ].join('\n');
}

async function runReplicaExport(): Promise<void> {
  const result = await benchReplicaExport({
    batches: smoke ? 2 : 100,
    batchesPerRun: smoke ? 2 : 10,
    repeats: values.repeats ? Number(values.repeats) : smoke ? 1 : 3,
    serviceNodeArgs,
    log,
  });
  process.stdout.write(`\n${replicaLines(result)}\n`);
  record('replica', result);
}
