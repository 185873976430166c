import { EXPORT_FORMATS } from '../src/export/export-formats.ts';
import type { BenchClient } from './http-client.ts';
import type { ServiceProcess } from './service-process.ts';
import { withStoredCatalog } from './stored-catalog.ts';

/** The forms of the export (CONTRACT §11.4), by the file extension `src/export/export-formats.ts` gives each. */
export type ExportForm = 'ndjson' | 'csv' | 'xlsx';

export const EXPORT_FORMS: readonly ExportForm[] = ['ndjson', 'csv', 'xlsx'];

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

/** The runs of one form: the whole catalog, and a prefix of about a ninth of it. */
export interface ExportFormRuns {
  form: ExportForm;
  whole: ExportRun[];
  prefix: ExportRun[];
}

export interface ExportBenchResult {
  database: 'server' | 'embedded';
  storedProducts: number;
  /** The service's RSS once ready on the loaded catalog, before any export. */
  readyRssMiB: number;
  forms: ExportFormRuns[];
  /** The service's peak RSS (VmHWM) at the end. */
  peakRssMiB: number;
}

const mediaTypeOf = (form: ExportForm): string => {
  const format = EXPORT_FORMATS.find((f) => f.fileExtension === form);
  if (format === undefined) throw new Error(`no export form ${form}`);
  return format.mediaType;
};

/** The bytes every XLSX (a zip archive) starts with. */
const ZIP_SIGNATURE = Buffer.from('PK\u0003\u0004', 'latin1');

/**
 * Checks that an export holds `products`: a line per product in NDJSON; in CSV the header and a
 * record per variant (the generated texts hold no line break); an XLSX is a zip archive, its cells
 * left to the tests.
 */
function checkExport(form: ExportForm, products: number, { lines, head }: { lines: number; head: Buffer }) {
  const expected = form === 'ndjson' ? products : form === 'csv' ? 1 + 3 * products : null;
  if (expected !== null && lines !== expected) {
    throw new Error(`${form} export: ${lines} lines, ${expected} expected`);
  }
  if (form === 'xlsx' && !head.equals(ZIP_SIGNATURE)) throw new Error('xlsx export: not a zip archive');
}

/** One export read as fast as the client takes it, with the service's RSS sampled every 50 ms. */
async function exportOnce(
  client: BenchClient,
  service: ServiceProcess,
  form: ExportForm,
  query: string,
  products: number,
): Promise<ExportRun> {
  const rssBeforeMiB = service.rssMiB();
  let rssMaxMiB = rssBeforeMiB;
  const sampler = setInterval(() => {
    rssMaxMiB = Math.max(rssMaxMiB, service.rssMiB());
  }, 50);
  try {
    const answer = await client.exportCatalog(query, mediaTypeOf(form));
    checkExport(form, products, answer);
    return {
      products,
      lines: answer.lines,
      megabytes: answer.bytes / 1e6,
      seconds: answer.ms / 1000,
      productsPerSecond: products / (answer.ms / 1000),
      rssBeforeMiB,
      rssMaxMiB: Math.max(rssMaxMiB, service.rssMiB()),
    };
  } finally {
    clearInterval(sampler);
  }
}

/**
 * `GET /products/export` of a stored catalog of `batches` × 1000 products (CONTRACT §11.4) in each
 * of `forms`: per repeat and form, a prefix of about a ninth of the catalog, then the whole, each
 * read as fast as the client takes it, with the service's RSS sampled meanwhile. A flat memory shows
 * as the same peak for both sizes.
 */
export async function benchExport(options: {
  databaseUrl: string | undefined;
  batches: number;
  repeats: number;
  forms: readonly ExportForm[];
  serviceNodeArgs?: readonly string[];
  log: (line: string) => void;
}): Promise<ExportBenchResult> {
  return withStoredCatalog(
    { name: 'export', ...options },
    async ({ database, products, prefix, service, client }) => {
      const readyRssMiB = service.rssMiB();
      // The ids are `x-p<n>`: `x-p1` starts 1 + 10 + 100 + … of them, about a ninth of a power of ten.
      let inPrefix = 0;
      for (let n = 1; n < products; n = n * 10) inPrefix += Math.min(n, products - n);
      const forms: ExportFormRuns[] = options.forms.map((form) => ({ form, whole: [], prefix: [] }));
      for (let r = 0; r < options.repeats; r++) {
        for (const runs of forms) {
          runs.prefix.push(await exportOnce(client, service, runs.form, `?prefix=${prefix}-p1`, inPrefix));
          runs.whole.push(await exportOnce(client, service, runs.form, '', products));
        }
        options.log(`export bench: repeat ${r + 1} of ${options.repeats} done`);
      }
      return { database, storedProducts: products, readyRssMiB, forms, peakRssMiB: service.peakRssMiB() };
    },
  );
}
