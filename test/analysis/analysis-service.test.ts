import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ImageAnalysis } from '../../src/analysis/analysis.schemas.ts';
import { createAnalysisService, summarize, unanalyzable } from '../../src/analysis/analysis.service.ts';
import { createSafeFetch, type FetchImage } from '../../src/analysis/safe-fetch.ts';
import { createTtlCache } from '../../src/runtime/ttl-cache.ts';
import { createWorkQueue, QueueFullError } from '../../src/analysis/work-queue.ts';
import {
  decodeForTests,
  fakeClassifier,
  roomPhoto,
  serve,
  startServer,
  verdict,
} from './analysis-helpers.ts';

let server: Awaited<ReturnType<typeof startServer>>;
let hits: Record<string, number>;
let flaky = 404;

before(async () => {
  const photo = await roomPhoto(800, 600);
  hits = {};
  const counted = (path: string, handler: ReturnType<typeof serve>) => ({
    [path]: ((request, response) => {
      hits[path] = (hits[path] ?? 0) + 1;
      handler(request, response);
    }) as ReturnType<typeof serve>,
  });
  server = await startServer({
    ...counted('/a.jpg', serve(photo)),
    ...counted('/same-bytes.jpg', serve(photo)),
    ...counted('/b.jpg', serve(await roomPhoto(900, 600))),
    ...counted('/flaky.jpg', (request, response) =>
      flaky === 200 ? serve(photo)(request, response) : response.writeHead(flaky).end(),
    ),
  });
});

after(() => server.close());

function image(overrides: Partial<ImageAnalysis>): ImageAnalysis {
  return {
    isStageable: true,
    roomType: 'bedroom',
    confidence: 0.9,
    details: 'x',
    imageUrl: 'u',
    ...overrides,
  };
}

void test('summarize: counts, exact mean, distinct rooms in first-appearance order without unknown', () => {
  const images = [
    image({ roomType: 'kitchen', confidence: 0.8 }),
    unanalyzable('u2', 'Host not found: x.invalid'),
    image({ roomType: 'bedroom', confidence: 0.6, isStageable: false }),
    image({ roomType: 'kitchen', confidence: 0.7 }),
    image({ roomType: 'unknown', confidence: 0.5 }),
    image({ roomType: 'exterior', confidence: 0.9, isStageable: false }),
  ];
  assert.deepEqual(summarize(images), {
    totalImages: 6,
    stageableImages: 3,
    nonStageableImages: 3,
    confidence: (0.8 + 0 + 0.6 + 0.7 + 0.5 + 0.9) / 6,
    roomTypes: ['kitchen', 'bedroom', 'exterior'],
  });
  assert.deepEqual(summarize([]), {
    totalImages: 0,
    stageableImages: 0,
    nonStageableImages: 0,
    confidence: 0,
    roomTypes: [],
  });
});

void test('caches by URL and by content, and shares one analysis between concurrent identical URLs', async () => {
  const classifier = fakeClassifier();
  const service = createAnalysisService({ classifier, decode: decodeForTests, allowPrivateHosts: true });
  const a = server.url('/a.jpg');
  const first = await service.analyze([a, a, server.url('/b.jpg')]);
  assert.equal(first.images[0]!.details, 'Empty bedroom, 800×600, sharp and well lit');
  assert.deepEqual(first.images[1], first.images[0]);
  assert.equal(hits['/a.jpg'], 1);
  assert.equal(classifier.calls, 2);

  const again = await service.analyze([a]);
  assert.deepEqual(again.images[0], first.images[0]);
  assert.equal(hits['/a.jpg'], 1, 'a cached URL is not fetched again');

  const sameBytes = await service.analyze([server.url('/same-bytes.jpg')]);
  assert.equal(hits['/same-bytes.jpg'], 1);
  assert.equal(classifier.calls, 2, 'the same bytes under another URL are not classified again');
  assert.equal(sameBytes.images[0]!.imageUrl, server.url('/same-bytes.jpg'));
  assert.equal(sameBytes.images[0]!.confidence, first.images[0]!.confidence);
});

void test('entries expire after the TTL', async () => {
  let clock = 0;
  const classifier = fakeClassifier();
  const service = createAnalysisService({
    classifier,
    decode: decodeForTests,
    allowPrivateHosts: true,
    cacheTtlMs: 1000,
    now: () => clock,
  });
  const before = hits['/b.jpg'] ?? 0;
  await service.analyze([server.url('/b.jpg')]);
  clock = 999;
  await service.analyze([server.url('/b.jpg')]);
  assert.equal(hits['/b.jpg'], before + 1);
  clock = 1000;
  await service.analyze([server.url('/b.jpg')]);
  assert.equal(hits['/b.jpg'], before + 2);
  assert.equal(classifier.calls, 2);
});

void test('failures are not cached: the next request tries again', async () => {
  const service = createAnalysisService({
    classifier: fakeClassifier(),
    decode: decodeForTests,
    allowPrivateHosts: true,
  });
  flaky = 503;
  const failed = await service.analyze([server.url('/flaky.jpg')]);
  assert.equal(failed.images[0]!.details, 'The image server answered HTTP 503');
  flaky = 200;
  const recovered = await service.analyze([server.url('/flaky.jpg')]);
  assert.equal(recovered.images[0]!.isStageable, true);
});

void test('a model failure is the analyzer’s: a plain reason for the caller, the error for the log', async () => {
  const logged: unknown[] = [];
  const service = createAnalysisService({
    classifier: fakeClassifier(() => {
      throw new Error('wasm out of memory');
    }),
    decode: decodeForTests,
    allowPrivateHosts: true,
    onError: (error) => logged.push(error),
  });
  const result = await service.analyze([server.url('/b.jpg')]);
  assert.deepEqual(
    result.images[0],
    unanalyzable(server.url('/b.jpg'), 'The analyzer could not process this image; try again later'),
  );
  assert.equal((logged[0] as Error).message, 'wasm out of memory');
});

void test('an injected fetcher replaces the safe fetch; a throw that is not a FetchFailure is reported plainly', async () => {
  const fetchImage: FetchImage = async () => {
    throw new TypeError('socket hang up');
  };
  const service = createAnalysisService({
    classifier: fakeClassifier(),
    decode: decodeForTests,
    allowPrivateHosts: true,
    fetchImage,
  });
  const result = await service.analyze(['https://example.com/a.jpg']);
  assert.equal(result.images[0]!.details, 'The image could not be fetched');
});

void test('the verdict of the model flows through: furnished rooms, exteriors, room types', async () => {
  const picks = [
    verdict({
      roomType: 'kitchen',
      furnished: true,
      roomProbabilities: { kitchen: 0.97, dining_room: 0.03 },
    }),
    verdict({
      roomType: 'exterior',
      scene: 'exterior',
      sceneProbabilities: { interior: 0.02, exterior: 0.97, floor_plan: 0.005, other: 0.005 },
    }),
  ];
  let call = 0;
  const service = createAnalysisService({
    classifier: fakeClassifier(() => picks[call++]!),
    decode: decodeForTests,
    allowPrivateHosts: true,
    fetchImage: createSafeFetch({ allowPrivateHosts: true }),
    maxConcurrentImages: 1,
  });
  const result = await service.analyze([server.url('/a.jpg'), server.url('/b.jpg')]);
  assert.deepEqual(
    result.images.map(({ isStageable, roomType, details }) => ({ isStageable, roomType, details })),
    [
      {
        isStageable: true,
        roomType: 'kitchen',
        details: 'Furnished kitchen, 800×600, sharp and well lit — staging needs furniture removal',
      },
      {
        isStageable: false,
        roomType: 'exterior',
        details: 'Exterior photo: only interior rooms can be staged',
      },
    ],
  );
  assert.deepEqual(result.summary.roomTypes, ['kitchen', 'exterior']);
});

void test('work queue: runs at most maxRunning at once, admits all or nothing', async () => {
  const queue = createWorkQueue({ maxRunning: 2, maxWaiting: 2 });
  let active = 0;
  let peak = 0;
  const task = () => async () => {
    active += 1;
    peak = Math.max(peak, active);
    await new Promise((resolve) => setTimeout(resolve, 20));
    active -= 1;
    return active;
  };
  const batch = queue.runAll([task(), task(), task(), task()]);
  assert.equal(queue.running, 2);
  assert.equal(queue.waiting, 2);
  await assert.rejects(queue.runAll([task()]), QueueFullError);
  assert.equal(queue.waiting, 2, 'a refused batch leaves nothing behind');
  assert.equal((await batch).length, 4);
  assert.equal(peak, 2);
  assert.equal(queue.running, 0);
});

void test('work queue: one owner holds at most maxPerOwner tasks, and owners take turns for free slots', async () => {
  const queue = createWorkQueue({ maxRunning: 1, maxWaiting: 10, maxPerOwner: 3 });
  const started: string[] = [];
  const finish: Array<() => void> = [];
  const task = (name: string) => () => {
    started.push(name);
    return new Promise<string>((resolve) => finish.push(() => resolve(name)));
  };
  const a = queue.runAll([task('a1'), task('a2'), task('a3')], 'a');
  const b = queue.runAll([task('b1'), task('b2')], 'b');
  await assert.rejects(
    queue.runAll([task('a4')], 'a'),
    (error: unknown) =>
      error instanceof QueueFullError &&
      error.message ===
        'The analyzer is still working on 3 earlier images of this account; retry in a few seconds.',
  );
  assert.equal(queue.waiting, 4, 'a refused request leaves nothing behind');
  for (let round = 0; round < 20 && finish.length > 0; round++) {
    finish.shift()!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.deepEqual(await a, ['a1', 'a2', 'a3']);
  assert.deepEqual(await b, ['b1', 'b2']);
  // a1 ran at once; from then on a freed slot goes to a and b in turn.
  assert.deepEqual(started, ['a1', 'a2', 'b1', 'a3', 'b2']);
  // Tasks that throw or reject give their share back too.
  await assert.rejects(
    queue.runAll(
      [
        () => {
          throw new Error('thrown');
        },
        () => Promise.reject(new Error('rejected')),
      ],
      'a',
    ),
    /thrown/,
  );
  await new Promise((resolve) => setImmediate(resolve));
  // Its whole share given back, a is admitted again for all of it.
  const again = queue.runAll([task('a5'), task('a6'), task('a7')], 'a');
  // Bounded, so that a share never given back fails the test instead of spinning.
  for (let round = 0; round < 20 && (finish.length > 0 || started.length < 8); round++) {
    await new Promise((resolve) => setImmediate(resolve));
    finish.shift()?.();
  }
  assert.equal(started.length, 8, 'a5, a6 and a7 started');
  assert.deepEqual(await again, ['a5', 'a6', 'a7']);
  assert.deepEqual([queue.running, queue.waiting], [0, 0]);
});

void test('ttl cache: bounded, least recently used goes first', () => {
  const cache = createTtlCache<number>({ ttlMs: 1000, maxEntries: 2, now: () => 0 });
  cache.set('a', 1);
  cache.set('b', 2);
  assert.equal(cache.get('a'), 1);
  cache.set('c', 3);
  assert.equal(cache.get('b'), undefined);
  assert.equal(cache.get('a'), 1);
  assert.equal(cache.get('c'), 3);
  assert.equal(cache.size, 2);
});
