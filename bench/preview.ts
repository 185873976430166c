import { randomUUID } from 'node:crypto';
import { dropSchemaWithJobs } from '../test/helpers/drop-schema.ts';
import { generateBatch } from './catalog-generator.ts';
import { createBenchClient, percentile } from './http-client.ts';
import { startServiceProcess } from './service-process.ts';

/** What the preview bench measured: its latency and the submission's 202, over the same bodies. */
export interface PreviewBenchResult {
  database: 'server' | 'embedded';
  items: number;
  previewMs: { p50: number; min: number; max: number; n: number };
  submitMs: { p50: number; min: number; max: number; n: number };
  /** Median preview over median 202: the target is below 2. */
  ratio: number;
}

const ITEMS = 1000;

const figures = (xs: number[]) => ({
  p50: percentile(xs, 50),
  min: Math.min(...xs),
  max: Math.max(...xs),
  n: xs.length,
});

/**
 * A 1000-item preview against a stored catalog of those 1000 products (each item an update: new
 * prices and names, 3 variants × 3 images) beside the 202 of submitting the same body (CONTRACT
 * §10.3's target: under twice as long). Each pair runs with the worker idle: the submission's batch is
 * processed before the next pair, so neither measures the other's work.
 */
export async function benchPreview(options: {
  databaseUrl: string | undefined;
  repeats: number;
  /** Node flags for the service process (`--service-node-args`, e.g. `--cpu-prof`). */
  serviceNodeArgs?: readonly string[];
  log: (line: string) => void;
}): Promise<PreviewBenchResult> {
  const schema = `bench_preview_${process.pid}_${Date.now() % 100000}`;
  const service = await startServiceProcess(
    {
      ANALYSIS_ENABLED: 'false',
      ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: schema } : {}),
    },
    options.serviceNodeArgs,
  );
  const prefix = `preview-${randomUUID().slice(0, 8)}`;
  const client = await createBenchClient(service.baseUrl, service.secret, `bench-${prefix}`);
  try {
    await client.waitTerminal([
      (await client.submit(JSON.stringify({ items: generateBatch(prefix, 0) }))).batchId,
    ]);
    const previews: number[] = [];
    const submits: number[] = [];
    // One warm-up pair first (JIT, the first plans), not counted.
    for (let r = -1; r < options.repeats; r++) {
      const body = JSON.stringify({ items: generateBatch(prefix, 0, { generation: r + 2 }) });
      const { summary, ms: previewMs } = await client.preview(body);
      if (summary.update !== ITEMS) throw new Error(`preview of updates said ${JSON.stringify(summary)}`);
      const { batchId, ms: submitMs } = await client.submit(body);
      await client.waitTerminal([batchId]);
      if (r < 0) continue;
      previews.push(previewMs);
      submits.push(submitMs);
    }
    const result: PreviewBenchResult = {
      database: options.databaseUrl ? 'server' : 'embedded',
      items: ITEMS,
      previewMs: figures(previews),
      submitMs: figures(submits),
      ratio: percentile(previews, 50) / percentile(submits, 50),
    };
    options.log(`preview bench: ${options.repeats} pairs done`);
    return result;
  } finally {
    await client.close();
    await service.stop();
    if (options.databaseUrl) await dropSchemaWithJobs(options.databaseUrl, schema);
  }
}
