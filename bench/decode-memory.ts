/**
 * Benchmark of the analyzer's decode memory budget: one request of four small AVIF files that each
 * declare 6000×6000 pixels (about 618 MiB each to decode, docs/analyzer.md), served from loopback,
 * through the analysis service with the real decoder and a constant verdict instead of the model.
 * The process's peak RSS is measured with the default budget (1024 MiB) and with the budget lifted
 * (100 GiB), each in a process of its own, since RSS is the whole process's and freed pages stay.
 *
 *   node --import tsx bench/decode-memory.ts           both runs, and the ratio
 *   node --import tsx bench/decode-memory.ts --smoke   2000×2000 pixels (CI)
 *   --budget-mib N                                     one run in this process, printed as JSON
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { createAnalysisService } from '../src/analysis/analysis.service.ts';
import { decodeForModel } from '../src/analysis/model/decode-for-model.ts';
import { fakeClassifier, serve, startServer } from '../test/analysis/analysis-helpers.ts';

const { values } = parseArgs({
  options: { smoke: { type: 'boolean', default: false }, 'budget-mib': { type: 'string' } },
});
const side = values.smoke ? 2000 : 6000;
const IMAGES = 4;
const MIB = 1024 * 1024;

interface Run {
  budgetMiB: number;
  baseRssMiB: number;
  peakRssMiB: number;
  ms: number;
}

/** Analyzes the four images once with a budget of `budgetMiB`; measures this process. */
async function run(budgetMiB: number): Promise<Run> {
  const routes: Record<string, ReturnType<typeof serve>> = {};
  for (let n = 0; n < IMAGES; n++) {
    // Distinct colours, so that the content cache does not fold them into one.
    const background = { r: 100 + n, g: 120, b: 140 };
    const avif = await sharp({ create: { width: side, height: side, channels: 3, background } })
      .avif({ effort: 0, quality: 30 })
      .toBuffer();
    routes[`/${n}.avif`] = serve(avif, 'image/avif');
  }
  const server = await startServer(routes);
  const service = createAnalysisService({
    classifier: fakeClassifier(),
    decode: decodeForModel,
    allowPrivateHosts: true,
    decodeMemoryBytes: budgetMiB * MIB,
  });
  const baseRss = process.memoryUsage().rss;
  let peakRss = baseRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 10);
  const started = performance.now();
  const result = await service.analyze(Array.from({ length: IMAGES }, (_, n) => server.url(`/${n}.avif`)));
  const ms = performance.now() - started;
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  await server.close();
  const refused = result.images.filter((image) => image.details.startsWith('Too large to decode'));
  if (refused.length > 0) throw new Error(`${refused.length} images were refused: ${refused[0]!.details}`);
  return { budgetMiB, baseRssMiB: baseRss / MIB, peakRssMiB: peakRss / MIB, ms };
}

if (values['budget-mib'] !== undefined) {
  console.log(JSON.stringify(await run(Number(values['budget-mib']))));
} else {
  const inChild = (budgetMiB: number): Run => {
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/decode-memory.ts',
        '--budget-mib',
        String(budgetMiB),
        ...(values.smoke ? ['--smoke'] : []),
      ],
      { encoding: 'utf8' },
    );
    if (child.status !== 0) throw new Error(`decode bench failed: ${child.stderr}`);
    return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Run;
  };
  const lifted = inChild(100 * 1024);
  const budgeted = inChild(1024);
  const f = (n: number) => n.toFixed(0);
  console.log(`\ndecode memory budget — ${IMAGES} AVIFs of ${side}×${side} pixels in one request`);
  console.log('budget      peak RSS  added   time ms');
  for (const r of [lifted, budgeted]) {
    const name = r.budgetMiB === 1024 ? '1024 MiB' : 'lifted';
    console.log(
      `${name.padEnd(10)}  ${f(r.peakRssMiB).padStart(8)}  ${f(r.peakRssMiB - r.baseRssMiB).padStart(5)}  ${f(r.ms).padStart(8)}`,
    );
  }
  const added = (r: Run) => r.peakRssMiB - r.baseRssMiB;
  console.log(`memory added with the budget: ${(added(budgeted) / added(lifted)).toFixed(2)}× of without`);
}
