/**
 * Benchmark of the stageability analyzer through its real HTTP route, on a socket: 10 photos served
 * from loopback (from ../shared/eval/rooms-dev when present, else generated), the real vision model,
 * caching off so every request does the full work. Reports p50/p95 latency of a 10-image request and
 * images/s with 1 and 4 concurrent clients, the latency of a cached repeat, and peak RSS; writes
 * bench/results/analysis.json.
 *
 *   node --import tsx bench/analysis.ts            full run
 *   node --import tsx bench/analysis.ts --smoke    one or two requests (CI)
 *   --stub-model                                   a constant verdict instead of the model: measures
 *                                                  fetching, decoding and quality alone
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import type { AnalysisResult } from '../src/analysis/analysis.schemas.ts';
import { createAnalysisService } from '../src/analysis/analysis.service.ts';
import type { RawImage, SceneClassifier } from '../src/analysis/scene-types.ts';
import {
  buildAnalysisApp,
  decodeForTests,
  fakeClassifier,
  mintToken,
  roomPhoto,
  serve,
  startServer,
} from '../test/analysis/analysis-helpers.ts';

const smoke = process.argv.includes('--smoke');
const stubModel = process.argv.includes('--stub-model');
const ROOMS_DEV = fileURLToPath(new URL('../../shared/eval/rooms-dev/', import.meta.url));
const RESULTS = fileURLToPath(new URL('./results/analysis.json', import.meta.url));
// One photo per kind, listing photos at their real sizes; the last two exercise exterior and floor plan.
const DEV_PHOTOS = [
  'bathroom/houses_121_bathroom.jpg',
  'bedroom/houses_121_bedroom.jpg',
  'kitchen/houses_157_kitchen.jpg',
  'bedroom/aihs_IMG_0722.jpg',
  'bathroom/houses_457_bathroom.jpg',
  'kitchen/houses_517_kitchen.jpg',
  'bedroom/houses_529_bedroom.jpg',
  'bedroom/houses_217_bedroom.jpg',
  'exterior/houses_121_frontal.jpg',
  'floor_plan/fpd_CubiCasa5K_download-1.jpg',
];

async function photos(): Promise<{ source: string; bodies: Buffer[] }> {
  if (DEV_PHOTOS.every((file) => existsSync(`${ROOMS_DEV}${file}`))) {
    return {
      source: 'rooms-dev',
      bodies: await Promise.all(DEV_PHOTOS.map((file) => readFile(`${ROOMS_DEV}${file}`))),
    };
  }
  const sizes: Array<[number, number]> = [
    [1024, 768],
    [1280, 960],
    [1600, 1200],
    [2048, 1536],
    [1024, 682],
  ];
  const bodies = await Promise.all(
    Array.from({ length: 10 }, (_, i) => roomPhoto(...sizes[i % sizes.length]!, { level: i * 3 })),
  );
  return { source: 'generated', bodies };
}

async function loadClassifier(): Promise<{
  classifier: SceneClassifier;
  decode: (b: Buffer) => Promise<RawImage>;
}> {
  if (stubModel) return { classifier: fakeClassifier(), decode: decodeForTests };
  const model = await import('../src/analysis/model/index.ts');
  const classifier = model.createSceneClassifier({});
  await classifier.ready();
  return { classifier, decode: model.decodeForModel };
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

interface Run {
  clients: number;
  requests: number;
  p50Ms: number;
  p95Ms: number;
  imagesPerSecond: number;
}

async function main(): Promise<void> {
  const { source, bodies } = await photos();
  const images = await startServer(
    Object.fromEntries(bodies.map((body, i) => [`/photo-${i}.jpg`, serve(body)])),
  );
  const loadStarted = performance.now();
  const { classifier, decode } = await loadClassifier();
  const loadMs = performance.now() - loadStarted;
  // Caching off for the measured runs: every request fetches, measures and classifies all 10 photos.
  const analysis = createAnalysisService({ classifier, decode, allowPrivateHosts: true, cacheTtlMs: 0 });
  const app = await buildAnalysisApp(analysis);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const endpoint = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/analysis/stageability/multiple`;
  const dispatcher = new Agent({ connections: 8 });
  const headers = {
    authorization: `Bearer ${await mintToken({ expiresInSeconds: 3600 })}`,
    'content-type': 'application/json',
  };
  const imageUrls = bodies.map((_, i) => images.url(`/photo-${i}.jpg`));

  const post = async (urls: string[]): Promise<{ ms: number; result: AnalysisResult }> => {
    const started = performance.now();
    const response = await request(endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ imageUrls: urls }),
      dispatcher,
    });
    const result = (await response.body.json()) as AnalysisResult;
    if (response.statusCode !== 200)
      throw new Error(`HTTP ${response.statusCode}: ${JSON.stringify(result)}`);
    return { ms: performance.now() - started, result };
  };

  const measure = async (clients: number, perClient: number): Promise<Run> => {
    const latencies: number[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async (_, client) => {
        // Each client its own URLs (same photos): concurrent requests for one URL share its analysis.
        const urls = imageUrls.map((url) => `${url}?client=${client}`);
        for (let i = 0; i < perClient; i++) latencies.push((await post(urls)).ms);
      }),
    );
    const wallSeconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      clients,
      requests: latencies.length,
      p50Ms: Math.round(percentile(latencies, 50)),
      p95Ms: Math.round(percentile(latencies, 95)),
      imagesPerSecond: Math.round(((latencies.length * imageUrls.length) / wallSeconds) * 10) / 10,
    };
  };

  const warm = await post(imageUrls);
  // 20 requests for one client: the p50 of 10 moved by 100 ms and more between runs.
  const runs = smoke ? [await measure(1, 1)] : [await measure(1, 20), await measure(4, 4)];

  const cachedAnalysis = createAnalysisService({ classifier, decode, allowPrivateHosts: true });
  await cachedAnalysis.analyze(imageUrls);
  const cachedStarted = performance.now();
  await cachedAnalysis.analyze(imageUrls);
  const cachedMs = Math.round((performance.now() - cachedStarted) * 10) / 10;

  const peakRssMiB = Math.round(process.resourceUsage().maxRSS / 1024);
  const report = {
    date: new Date().toISOString(),
    mode: smoke ? 'smoke' : 'full',
    model: stubModel ? 'stub (no inference)' : 'real',
    photos: source,
    imagesPerRequest: imageUrls.length,
    modelLoadMs: Math.round(loadMs),
    runs,
    cachedRepeatMs: cachedMs,
    peakRssMiB,
    node: process.version,
    verdicts: warm.result.images.map(({ roomType, isStageable, confidence, details }) => ({
      roomType,
      isStageable,
      confidence,
      details,
    })),
  };

  const modelNote = stubModel ? ', STUB MODEL (no inference)' : '';
  console.log(
    `stageability analyzer — ${imageUrls.length} ${source} photos per request over loopback HTTP${modelNote}`,
  );
  console.log(
    `model load ${report.modelLoadMs} ms; cached repeat ${cachedMs} ms; peak RSS ${peakRssMiB} MiB\n`,
  );
  console.log('clients  requests  p50 ms  p95 ms  images/s');
  for (const run of runs) {
    console.log(
      `${String(run.clients).padStart(7)}  ${String(run.requests).padStart(8)}  ${String(run.p50Ms).padStart(6)}  ${String(run.p95Ms).padStart(6)}  ${String(run.imagesPerSecond).padStart(8)}`,
    );
  }
  await mkdir(fileURLToPath(new URL('./results/', import.meta.url)), { recursive: true });
  await writeFile(RESULTS, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nwrote ${RESULTS}`);

  await dispatcher.close();
  await app.close();
  await analysis.close();
  await images.close();
}

// Exits explicitly: after a failure the image server and model threads would keep the process alive.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
