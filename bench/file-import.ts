import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { dropSchemaWithJobs } from '../test/helpers/drop-schema.ts';
import { writeCatalogFile, type CatalogFileFormat } from './catalog-files.ts';
import { BATCH } from './catalog-generator.ts';
import { readCpuSeconds } from './machine-load.ts';
import { readStatusMiB, startServiceProcess } from './service-process.ts';

/** One run of the command-line client on a file of generated products. */
export interface ImportRun {
  format: CatalogFileFormat;
  products: number;
  megabytes: number;
  /** From the client's start to its exit: both readings of the file, every batch sent and finished. */
  seconds: number;
  itemsPerSecond: number;
  /** The client process's peak RSS (VmHWM, sampled every 50 ms). */
  clientPeakRssMiB: number;
  /**
   * CPU seconds (user and system) of the client and of the service during the run: on a shared
   * machine, what each form costs whatever else runs.
   */
  clientCpuSeconds: number;
  serviceCpuSeconds: number;
}

export interface ImportBenchResult {
  database: 'server' | 'embedded';
  productsPerRun: number;
  /** How the client was run, the file's path and the service's address left out. */
  clientCommand: string;
  runs: ImportRun[];
  /**
   * Per repeat, each spreadsheet form's items/s over the JSONL run's of the same repeat (the runs
   * of a repeat follow one another, so they share the machine's state).
   */
  ratios: Array<{ format: CatalogFileFormat; vsJsonl: number[] }>;
  /** The service's peak RSS (VmHWM) at the end. */
  servicePeakRssMiB: number;
}

const CLIENT_ARGS = ['--import', 'tsx', 'src/cli/ingest-file.ts'];

/**
 * Runs the command-line client (`npm run ingest`, without npm) on `file` against the service, as a
 * tenant whose token it mints with the service's secret; resolves once it exits, with its time and
 * peak RSS. Any exit but 0 (every item upserted) fails the bench.
 */
async function runClient(file: string, baseUrl: string, secret: string, tenant: string) {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...CLIENT_ARGS, file, '--url', baseUrl, '--tenant', tenant, '--quiet'],
    {
      env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), AUTH_JWT_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let peak = 0;
  let cpuSeconds = 0;
  const sample = () => {
    try {
      peak = Math.max(peak, readStatusMiB(child.pid!, 'VmHWM'));
      cpuSeconds = readCpuSeconds(child.pid!);
    } catch {
      // exited between two samples: its peak was taken by the last one
    }
  };
  const sampler = setInterval(sample, 50);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0)
    throw new Error(`ingest of ${path.basename(file)} exited with ${code}: ${output.slice(-2000)}`);
  return { seconds, clientPeakRssMiB: peak, clientCpuSeconds: cpuSeconds, output };
}

/**
 * Each form's import through the command-line client into a running service (CONTRACT §11.5: one
 * converter, the same batching as JSON): `repeats` times, a file of `batches` × 1000 new generated
 * products (bench/catalog-generator.ts, 3 variants × 3 images) in each of `formats`, JSONL included
 * as the reference, written before the clock starts; the runs of a repeat one after another, their
 * order turning from repeat to repeat so that no form always meets the largest catalog.
 */
export async function benchFileImport(options: {
  databaseUrl: string | undefined;
  batches: number;
  repeats: number;
  formats: readonly CatalogFileFormat[];
  serviceNodeArgs?: readonly string[];
  log: (line: string) => void;
}): Promise<ImportBenchResult> {
  const { databaseUrl, batches, log } = options;
  const formats: CatalogFileFormat[] = ['jsonl', ...options.formats.filter((f) => f !== 'jsonl')];
  const schema = `bench_import_${process.pid}_${Date.now() % 100000}`;
  const files = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-import-'));
  const tenant = `bench-import-${randomUUID().slice(0, 8)}`;
  const service = await startServiceProcess(
    {
      ANALYSIS_ENABLED: 'false',
      ...(databaseUrl ? { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema } : {}),
    },
    options.serviceNodeArgs,
  );
  try {
    const runs: ImportRun[] = [];
    const ratios = formats.slice(1).map((format) => ({ format, vsJsonl: [] as number[] }));
    for (let r = 0; r < options.repeats; r++) {
      const order = formats.map((_, i) => formats[(i + r) % formats.length]!);
      const repeat = new Map<CatalogFileFormat, ImportRun>();
      for (const format of order) {
        const file = path.join(files, `catalog-${r}.${format}`);
        const bytes = await writeCatalogFile(file, format, { prefix: `${format}${r}`, batches });
        try {
          const products = batches * BATCH;
          const serviceCpuBefore = readCpuSeconds(service.pid);
          const { seconds, clientPeakRssMiB, clientCpuSeconds } = await runClient(
            file,
            service.baseUrl,
            service.secret,
            tenant,
          );
          const run = {
            format,
            products,
            megabytes: bytes / 1e6,
            seconds,
            itemsPerSecond: products / seconds,
            clientPeakRssMiB,
            clientCpuSeconds,
            serviceCpuSeconds: readCpuSeconds(service.pid) - serviceCpuBefore,
          };
          runs.push(run);
          repeat.set(format, run);
        } finally {
          fs.rmSync(file, { force: true });
        }
      }
      const jsonl = repeat.get('jsonl')!.itemsPerSecond;
      for (const ratio of ratios) ratio.vsJsonl.push(repeat.get(ratio.format)!.itemsPerSecond / jsonl);
      log(
        `import bench: repeat ${r + 1}/${options.repeats}: ` +
          order.map((f) => `${f} ${repeat.get(f)!.itemsPerSecond.toFixed(0)}/s`).join(', '),
      );
    }
    return {
      database: databaseUrl ? 'server' : 'embedded',
      productsPerRun: batches * BATCH,
      clientCommand: ['node', ...CLIENT_ARGS, '<file>', '--url', '…', '--tenant', '…', '--quiet'].join(' '),
      runs,
      ratios,
      servicePeakRssMiB: service.peakRssMiB(),
    };
  } finally {
    await service.stop();
    if (databaseUrl) await dropSchemaWithJobs(databaseUrl, schema);
    fs.rmSync(files, { recursive: true, force: true });
  }
}
