import type { ExportBenchResult, ExportRun } from './export.ts';
import type { ImportBenchResult } from './file-import.ts';
import type { CpuUse } from './machine-load.ts';
import type { SearchBenchResult } from './search.ts';

/** Minimum, median (the lower of the middle two) and maximum. */
export const stats = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted.at(-1)! };
};

const f = (n: number, d = 0) => n.toFixed(d);

/** `median (min–max)` of `xs`. */
const spread = (xs: number[], d = 0) => {
  const s = stats(xs);
  return `${f(s.median, d)} (${f(s.min, d)}–${f(s.max, d)})`;
};

/** The export bench's table (bench/export.ts): each form's rate and the service's memory, by size. */
export function exportLines(result: ExportBenchResult): string {
  const row = (label: string, runs: ExportRun[]) => {
    const mb = runs[0]!.megabytes;
    return (
      `| ${label} | ${runs[0]!.products} (${f(mb)} MB) | ${spread(runs.map((r) => r.productsPerSecond))} | ` +
      `${f(Math.max(...runs.map((r) => r.rssMaxMiB)))} | ${spread(runs.map((r) => r.rssMaxMiB - r.rssBeforeMiB))} |`
    );
  };
  const runs = result.forms[0]?.whole.length ?? 0;
  return [
    `Export (GET /products/export) on ${result.database} PostgreSQL: ${result.storedProducts} stored products × 3 variants × 3 images, ${runs} runs each`,
    '',
    '| export | products (size) | products/s median (min–max) | service RSS max MiB | RSS above its start of the request, MiB median (min–max) |',
    '|---|---|---|---|---|',
    ...result.forms.flatMap(({ form, prefix, whole }) => [
      row(`${form.toUpperCase()}, a prefix`, prefix),
      row(`${form.toUpperCase()}, the whole catalog`, whole),
    ]),
    '',
    `Service RSS: ${f(result.readyRssMiB)} MiB when ready on the stored catalog, peak ${f(result.peakRssMiB)} MiB at the end.`,
  ].join('\n');
}

/** The import bench's table (bench/file-import.ts): each form's items/s, its ratio to JSONL, the client's memory. */
export function importLines(result: ImportBenchResult): string {
  const formats = [...new Set(result.runs.map((r) => r.format))];
  const ratioOf = (format: string) => result.ratios.find((r) => r.format === format)?.vsJsonl;
  return [
    `File import through the command-line client on ${result.database} PostgreSQL: ${result.productsPerRun} new products × 3 variants × 3 images per run`,
    `(the client run as \`${result.clientCommand}\`; its time runs from its start to its exit)`,
    '',
    "| file | size MB | items/s median (min–max) | items/s over the same repeat's JSONL, median (min–max) | CPU s per 1000 items, client + service (median) | client peak RSS MiB (max) |",
    '|---|---|---|---|---|---|',
    ...formats.map((format) => {
      const runs = result.runs.filter((r) => r.format === format);
      const ratio = ratioOf(format);
      return (
        `| ${format.toUpperCase()} | ${f(runs[0]!.megabytes, 1)} | ${spread(runs.map((r) => r.itemsPerSecond))} | ` +
        `${ratio ? spread(ratio, 2) : '1'} | ${cpuPerThousand(runs)} | ${f(Math.max(...runs.map((r) => r.clientPeakRssMiB)))} |`
      );
    }),
    '',
    `Service peak RSS ${f(result.servicePeakRssMiB)} MiB at the end.`,
  ].join('\n');
}

/** Median CPU seconds per 1000 items of the client and the service, `client + service`. */
function cpuPerThousand(runs: ImportBenchResult['runs']): string {
  const per = (pick: (run: ImportBenchResult['runs'][number]) => number) =>
    f(stats(runs.map((r) => (pick(r) / r.products) * 1000)).median, 2);
  return `${per((r) => r.clientCpuSeconds)} + ${per((r) => r.serviceCpuSeconds)}`;
}

/** The search bench's table (bench/search.ts): p50 and p95 of each kind of query. */
export function searchLines(result: SearchBenchResult): string {
  return [
    `Search (GET /products?q=, first page of 20 with total) on ${result.database} PostgreSQL, ${result.storedProducts} stored products`,
    '| q | example | searches | matches (median) | p50 ms | p95 ms |',
    '|---|---|---|---|---|---|',
    ...result.kinds.map(
      (k) =>
        `| ${k.kind} | \`${k.example}\` | ${k.searches} | ${k.medianTotal} | ${f(k.p50, 1)} | ${f(k.p95, 1)} |`,
    ),
    `| all | | ${result.all.searches} | | ${f(result.all.p50, 1)} | ${f(result.all.p95, 1)} (max ${f(result.all.max, 1)}) |`,
  ].join('\n');
}

/** A row of the CPU table: one side of one phase, each counted repeat's use. */
export interface CpuRow {
  run: string;
  side: string;
  uses: CpuUse[];
  /** The row whose total this one's is divided by, repeat by repeat, and its side's name. */
  against?: { side: string; uses: CpuUse[] };
}

/**
 * The ingestion bench's CPU table (bench/machine-load.ts): per phase and side, the CPU its timed
 * part spent per 1000 products, by whom, medians of the repeats; the machine's busy and stolen
 * cores; and its total against another side's (the service's against the baseline's), a figure that
 * moves less between machines than the pace does.
 */
export function cpuLines(rows: CpuRow[]): string {
  const median = (uses: CpuUse[], pick: (use: CpuUse) => number, d = 0) => f(stats(uses.map(pick)).median, d);
  const cells = (uses: CpuUse[]) =>
    [
      ...(['service', 'postgres', 'pgbouncer', 'bench', 'other', 'total'] as const).map((owner) =>
        median(uses, (use) => use.msPer1000[owner]),
      ),
      median(uses, (use) => use.busyCores, 2),
      median(uses, (use) => use.stealCores, 2),
    ].join(' | ');
  const against = ({ uses, against }: CpuRow) =>
    against
      ? `${spread(
          uses.map((use, i) => use.msPer1000.total / against.uses[i]!.msPer1000.total),
          2,
        )} × ${against.side}`
      : '';
  const cores = rows[0]?.uses[0]?.cores ?? 0;
  return [
    `CPU per 1000 products over each timed part, ms (medians of the repeats), and the machine's load (${cores} cores):`,
    '',
    '| run | side | service | PostgreSQL | PgBouncer | bench process | other | total | busy cores | steal (cores) | total against |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.run} | ${row.side} | ${cells(row.uses)} | ${against(row)} |`),
  ].join('\n');
}
