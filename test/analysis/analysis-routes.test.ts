/** The route's results: order and echo of URLs, every failure kind, summary arithmetic, back-pressure. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { AnalysisResult } from '../../src/analysis/analysis.schemas.ts';
import { createAnalysisService } from '../../src/analysis/analysis.service.ts';
import { createSafeFetch } from '../../src/analysis/safe-fetch.ts';
import {
  buildAnalysisApp,
  decodeForTests,
  fakeClassifier,
  gate,
  mintToken,
  redirect,
  roomPhoto,
  serve,
  solid,
  startServer,
  reached,
  verdict,
  postAnalysis,
} from './analysis-helpers.ts';

let server: Awaited<ReturnType<typeof startServer>>;
let app: FastifyInstance;
let strictApp: FastifyInstance;
let token: string;

before(async () => {
  const photo = await roomPhoto(1024, 768);
  const dark = await solid(800, 600, 6);
  server = await startServer({
    '/photo.jpg': serve(photo),
    '/photo-2.jpg': serve(await roomPhoto(1200, 900, { level: 10 })),
    '/dark.png': serve(dark, 'image/png'),
    '/page.html': serve('<!doctype html><p>listing</p>', 'text/html'),
    '/broken.jpg': serve(Buffer.from('JFIF? no, just text pretending'), 'image/jpeg'),
    // sharp reads SVG: called a PNG, a drawing must still not reach its XML parser.
    '/drawing.png': serve(
      '<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><image href="file:///etc/hostname"/></svg>',
      'image/png',
    ),
    '/huge.jpg': (_request, response) =>
      response
        .writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(26 * 1024 * 1024) })
        .end(),
    '/hang.jpg': () => undefined,
    '/to-metadata': redirect('http://169.254.169.254/latest/meta-data/iam'),
    '/r0': redirect('/r1'),
    '/r1': redirect('/r2'),
    '/r2': redirect('/r3'),
    '/r3': redirect('/photo.jpg'),
  });
  const service = (allowPrivateHosts: boolean) =>
    createAnalysisService({
      classifier: fakeClassifier(),
      decode: decodeForTests,
      allowPrivateHosts,
      fetchImage: createSafeFetch({ allowPrivateHosts, timeoutMs: 1000 }),
    });
  app = await buildAnalysisApp(service(true));
  strictApp = await buildAnalysisApp(service(false));
  token = await mintToken();
});

after(async () => {
  await app.close();
  await strictApp.close();
  await server.close();
});

/** Posts `body`; `authorization: null` sends no Authorization header. */
async function post(body: unknown, authorization: string | null = `Bearer ${token}`, target = app) {
  return postAnalysis(target, body, authorization);
}
void test('200: one entry per URL, in request order, each URL echoed as sent', async () => {
  const urls = [
    server.url('/photo-2.jpg'),
    server.url('/dark.png'),
    server.url('/photo.jpg?size=large&v=2'),
    server.url('/photo.jpg'),
    server.url('/missing.jpg'),
    server.url('/photo.jpg'),
    'ftp://127.0.0.1/photo.jpg',
    server.url('/photo-2.jpg#hash'),
    server.url('/page.html'),
    server.url('/dark.png'),
  ];
  const response = await post({ imageUrls: urls });
  assert.equal(response.status, 200);
  const result = response.body as unknown as AnalysisResult;
  assert.deepEqual(
    result.images.map((image) => image.imageUrl),
    urls,
  );
  assert.deepEqual(
    result.images.map((image) => image.isStageable),
    [true, false, true, true, false, true, false, true, false, false],
  );
  assert.deepEqual(result.images[3], {
    isStageable: true,
    roomType: 'bedroom',
    confidence: result.images[3]!.confidence,
    details: 'Empty bedroom, 1024×768, sharp and well lit',
    imageUrl: urls[3],
  });
  assert.equal(result.images[1]!.details, 'Too dark: mean brightness 6/255; also blurred');
  assert.equal(result.images[1]!.roomType, 'bedroom');
  assert.equal(result.images[0]!.details, 'Empty bedroom, 1200×900, sharp and well lit');
});

void test('every failure kind yields its unknown entry with the reason, and never fails the request', async () => {
  const cases: Array<[string, string]> = [
    [server.url('/missing.jpg'), 'The image server answered HTTP 404'],
    [server.url('/page.html'), 'Not an image: the server sent text/html'],
    [server.url('/huge.jpg'), 'Image too large: 26 MiB (limit 25 MiB)'],
    [server.url('/hang.jpg'), 'Timed out after 1 s fetching the image'],
    ['https://photos.no-such-host.invalid/a.jpg', 'Host not found: photos.no-such-host.invalid'],
    [server.url('/to-metadata'), 'Blocked address: 169.254.169.254 is a cloud metadata address'],
    [server.url('/r0'), 'Too many redirects (more than 3)'],
    ['ftp://127.0.0.1/photo.jpg', 'Only http and https URLs can be fetched, not ftp:'],
    [server.url('/broken.jpg'), 'Not a decodable image: not a JPEG, PNG, WebP, AVIF, GIF or TIFF file'],
    ['not a url at all', 'Not a valid URL'],
  ];
  const response = await post({ imageUrls: cases.map(([url]) => url) });
  assert.equal(response.status, 200);
  const result = response.body as unknown as AnalysisResult;
  assert.deepEqual(
    result.images,
    cases.map(([imageUrl, details]) => ({
      isStageable: false,
      roomType: 'unknown',
      confidence: 0,
      details,
      imageUrl,
    })),
  );
  assert.deepEqual(result.summary, {
    totalImages: 10,
    stageableImages: 0,
    nonStageableImages: 10,
    confidence: 0,
    roomTypes: [],
  });
});

void test('an SVG drawing called a PNG is refused by its bytes, before sharp reads it', async () => {
  const response = await post({ imageUrls: [server.url('/drawing.png')] });
  assert.equal(response.status, 200);
  assert.deepEqual((response.body as unknown as AnalysisResult).images, [
    {
      isStageable: false,
      roomType: 'unknown',
      confidence: 0,
      details: 'Not a decodable image: not a JPEG, PNG, WebP, AVIF, GIF or TIFF file',
      imageUrl: server.url('/drawing.png'),
    },
  ]);
});

void test('private and loopback addresses are refused before connecting when not allowed', async () => {
  const urls = [
    'http://10.0.0.1/a.jpg',
    server.url('/photo.jpg'),
    'http://[::1]/a.jpg',
    'http://192.168.1.20/a.jpg',
  ];
  const response = await post({ imageUrls: urls }, `Bearer ${token}`, strictApp);
  assert.equal(response.status, 200);
  const result = response.body as unknown as AnalysisResult;
  assert.deepEqual(
    result.images.map((image) => [image.roomType, image.confidence, image.details]),
    [
      ['unknown', 0, 'Blocked address: 10.0.0.1 is a private address'],
      ['unknown', 0, 'Blocked address: 127.0.0.1 is a loopback address'],
      ['unknown', 0, 'Blocked address: ::1 is a loopback address'],
      ['unknown', 0, 'Blocked address: 192.168.1.20 is a private address'],
    ],
  );
});

void test('summary: exact counts, mean confidence, distinct room types in order without unknown', async () => {
  const urls = [
    server.url('/photo.jpg'),
    server.url('/missing.jpg'),
    server.url('/dark.png'),
    server.url('/photo-2.jpg'),
  ];
  const result = (await post({ imageUrls: urls })).body as unknown as AnalysisResult;
  const confidences = result.images.map((image) => image.confidence);
  assert.equal(confidences[1], 0);
  assert.deepEqual(result.summary, {
    totalImages: 4,
    stageableImages: 2,
    nonStageableImages: 2,
    confidence: (confidences[0]! + confidences[1] + confidences[2]! + confidences[3]!) / 4,
    roomTypes: ['bedroom'],
  });
});

void test('a full analyzer answers 429 in the analysis shape, with Retry-After', async () => {
  // The model holds every image until the 429 has been seen: the queue stays full until then.
  const model = gate();
  const slowModel = fakeClassifier(() => verdict(), { hold: model.closed });
  const busy = createAnalysisService({
    classifier: slowModel,
    decode: decodeForTests,
    allowPrivateHosts: true,
    maxConcurrentImages: 2,
    maxQueuedImages: 3,
  });
  const busyApp = await buildAnalysisApp(busy);
  try {
    // Two images run, two wait: one more request of two would overflow the three waiting places.
    const running = post(
      { imageUrls: ['a', 'b', 'c', 'd'].map((v) => server.url(`/photo.jpg?${v}`)) },
      undefined,
      busyApp,
    );
    // The first two images have reached the model (so two more wait behind them).
    await reached(() => slowModel.calls >= 2, 'two images at the model');
    const refused = await post(
      { imageUrls: [server.url('/photo.jpg?e'), server.url('/photo.jpg?f')] },
      undefined,
      busyApp,
    );
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, {
      statusCode: 429,
      message: 'The analyzer is busy: too many images are waiting; retry in a few seconds.',
      error: 'Too Many Requests',
    });
    assert.equal(refused.headers['retry-after'], '5');
    // The two images at the model finish, and the two waiting run after them.
    model.open();
    assert.equal((await running).status, 200);
    const later = await post({ imageUrls: [server.url('/photo.jpg?e')] }, undefined, busyApp);
    assert.equal(later.status, 200);
  } finally {
    model.open();
    await busyApp.close();
  }
});

void test('one tenant holds at most its share of the analyzer: its next request is 429, others still get in', async () => {
  // The model holds every image until the other tenant's request has been let in.
  const model = gate();
  const slowModel = fakeClassifier(() => verdict(), { hold: model.closed });
  const shared = createAnalysisService({
    classifier: slowModel,
    decode: decodeForTests,
    allowPrivateHosts: true,
    maxConcurrentImages: 4,
    maxQueuedImages: 100,
    maxImagesPerTenant: 10,
  });
  // The service admits or refuses a request's images as `analyze` is called (the work queue takes
  // them all or none, at once), so a tenant seen here has had its request admitted or refused.
  const decided: string[] = [];
  const sharedApp = await buildAnalysisApp({
    ...shared,
    analyze: (urls, tenant) => {
      decided.push(tenant ?? '');
      return shared.analyze(urls, tenant);
    },
  });
  const busyTenant = `Bearer ${await mintToken({ tenant: 'busy-tenant' })}`;
  const otherTenant = `Bearer ${await mintToken({ tenant: 'other-tenant' })}`;
  try {
    const tenUrls = Array.from({ length: 10 }, (_, n) => server.url(`/photo.jpg?share=${n}`));
    const running = post({ imageUrls: tenUrls }, busyTenant, sharedApp);
    await reached(() => slowModel.calls >= 1, 'an image at the model');
    const refused = await post({ imageUrls: [server.url('/photo.jpg?share=10')] }, busyTenant, sharedApp);
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.body, {
      statusCode: 429,
      message: 'The analyzer is still working on 10 earlier images of this account; retry in a few seconds.',
      error: 'Too Many Requests',
    });
    assert.equal(refused.headers['retry-after'], '5');
    // The other tenant's request is decided while the busy tenant still holds its ten images; its
    // image then waits for a slot, so it is answered only once the model lets the images go.
    const other = post({ imageUrls: [server.url('/photo.jpg?other')] }, otherTenant, sharedApp);
    await reached(() => decided.includes('other-tenant'), "the other tenant's request decided");
    model.open();
    assert.equal((await other).status, 200);
    assert.equal((await running).status, 200);
    const again = await post({ imageUrls: [server.url('/photo.jpg?share=10')] }, busyTenant, sharedApp);
    assert.equal(again.status, 200);
  } finally {
    model.open();
    await sharedApp.close();
  }
});
