/**
 * The whole analyzer with the real vision model, through the HTTP route, on real listing photos of
 * ../shared/eval/rooms-dev served from loopback. The photos are chosen for unmistakable objects (a
 * toilet, a bed, an oven and fridge), a house front and a floor plan. Skipped, with the reason, where
 * the photos or the model are not there.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import sharp from 'sharp';
import type { AnalysisResult } from '../../src/analysis/analysis.schemas.ts';
import { createAnalysisService } from '../../src/analysis/analysis.service.ts';
import type { SceneClassifier } from '../../src/analysis/scene-types.ts';
import { buildAnalysisApp, mintToken, serve, startServer } from './analysis-helpers.ts';

const ROOMS_DEV = fileURLToPath(new URL('../../../shared/eval/rooms-dev/', import.meta.url));
const MODEL = fileURLToPath(new URL('../../src/analysis/model/index.ts', import.meta.url));

const skip = !existsSync(`${ROOMS_DEV}manifest.csv`)
  ? `no photos: ${ROOMS_DEV} is absent`
  : !existsSync(MODEL)
    ? 'the vision model (src/analysis/model/) has not landed'
    : false;

/** Photo → what any working analyzer must say about it. */
const PHOTOS: Array<{ file: string; roomType: string; isStageable: boolean; details: RegExp }> = [
  {
    file: 'bathroom/houses_121_bathroom.jpg',
    roomType: 'bathroom',
    isStageable: true,
    details: /^(Furnished|Empty) bathroom, 1024×682, sharp and well lit/,
  },
  {
    file: 'bedroom/houses_121_bedroom.jpg',
    roomType: 'bedroom',
    isStageable: true,
    details: /^Furnished bedroom, 1024×682, sharp and well lit — staging needs furniture removal$/,
  },
  {
    file: 'kitchen/houses_157_kitchen.jpg',
    roomType: 'kitchen',
    isStageable: true,
    details: /^(Furnished|Empty) kitchen, 1024×682, sharp and well lit/,
  },
  {
    file: 'bedroom/houses_157_bedroom.jpg',
    roomType: 'bedroom',
    isStageable: true,
    details: /^Furnished bedroom, 1024×682/,
  },
  {
    file: 'exterior/houses_121_frontal.jpg',
    roomType: 'exterior',
    isStageable: false,
    details: /^Exterior photo: only interior rooms can be staged$/,
  },
  {
    file: 'floor_plan/fpd_CubiCasa5K_download-1.jpg',
    roomType: 'floor_plan',
    isStageable: false,
    details: /^Floor plan, not a photo of a room/,
  },
];

const BEDROOM = 'bedroom/houses_109_bedroom.jpg';

let server: Awaited<ReturnType<typeof startServer>>;
let classifier: SceneClassifier;
let app: FastifyInstance;

before(async () => {
  if (skip) return;
  const routes: Record<string, ReturnType<typeof serve>> = {};
  for (const { file } of PHOTOS) routes[`/${file}`] = serve(await readFile(`${ROOMS_DEV}${file}`));
  // The same bedroom as a photo taken in the dark and one washed out to white, and a picture of 2×2 px.
  const bedroom = await readFile(`${ROOMS_DEV}${BEDROOM}`);
  routes['/dark.jpg'] = serve(await sharp(bedroom).linear(0.12, 0).jpeg().toBuffer());
  routes['/washed-out.jpg'] = serve(await sharp(bedroom).linear(0.2, 215).jpeg().toBuffer());
  routes['/tiny.png'] = serve(
    await sharp(Buffer.from([250, 10, 10, 10, 250, 10, 10, 10, 250, 200, 200, 10]), {
      raw: { width: 2, height: 2, channels: 3 },
    })
      .png()
      .toBuffer(),
  );
  server = await startServer(routes);
  const model = await import('../../src/analysis/model/index.ts');
  classifier = model.createSceneClassifier({ threads: 2 });
  await classifier.ready();
  const analysis = createAnalysisService({
    classifier,
    decode: model.decodeForModel,
    allowPrivateHosts: true,
  });
  app = await buildAnalysisApp(analysis);
});

after(async () => {
  await app?.close();
  await classifier?.close();
  await server?.close();
});

void test('real photos through the route: room types, stageability and summary', { skip }, async () => {
  const imageUrls = [...PHOTOS.map(({ file }) => server.url(`/${file}`)), server.url('/missing.jpg')];
  const response = await app.inject({
    method: 'POST',
    url: '/analysis/stageability/multiple',
    headers: { authorization: `Bearer ${await mintToken()}`, 'content-type': 'application/json' },
    payload: { imageUrls },
  });
  assert.equal(response.statusCode, 200);
  const result = response.json<AnalysisResult>();
  assert.deepEqual(
    result.images.map((image) => image.imageUrl),
    imageUrls,
  );
  PHOTOS.forEach((photo, index) => {
    const image = result.images[index]!;
    assert.equal(image.roomType, photo.roomType, `${photo.file}: ${image.details}`);
    assert.equal(image.isStageable, photo.isStageable, `${photo.file}: ${image.details}`);
    assert.match(image.details, photo.details, photo.file);
    assert.ok(
      image.confidence > 0.5 && image.confidence <= 1,
      `${photo.file}: confidence ${image.confidence}`,
    );
  });
  assert.deepEqual(result.images.at(-1), {
    isStageable: false,
    roomType: 'unknown',
    confidence: 0,
    details: 'The image server answered HTTP 404',
    imageUrl: server.url('/missing.jpg'),
  });
  assert.deepEqual(result.summary.roomTypes, ['bathroom', 'bedroom', 'kitchen', 'exterior', 'floor_plan']);
  assert.equal(result.summary.totalImages, 7);
  assert.equal(result.summary.stageableImages, 4);
  assert.equal(result.summary.nonStageableImages, 3);
  const mean = result.images.reduce((sum, image) => sum + image.confidence, 0) / 7;
  assert.equal(result.summary.confidence, mean);
});

void test(
  'a photo too dark, washed out or too small for the model to read is judged on its quality',
  { skip },
  async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/analysis/stageability/multiple',
      headers: { authorization: `Bearer ${await mintToken()}`, 'content-type': 'application/json' },
      payload: { imageUrls: ['/dark.jpg', '/washed-out.jpg', '/tiny.png'].map((p) => server.url(p)) },
    });
    assert.equal(response.statusCode, 200);
    const [dark, washedOut, tiny] = response
      .json<AnalysisResult>()
      .images.map(({ imageUrl: _, ...image }) => image);
    // The model takes the dark bedroom for a blank page: what it shows is unknown, its darkness is not.
    assert.deepEqual(dark, {
      isStageable: false,
      roomType: 'unknown',
      confidence: 0.99,
      details: 'Too dark: mean brightness 14/255; also blurred',
    });
    // Washed out to white, it measures like a white page: the answer says it may be either.
    assert.deepEqual(washedOut, {
      isStageable: false,
      roomType: 'other',
      confidence: 0.99,
      details:
        'Overexposed: mean brightness 238/255, or not a photo of a room at all: only interior room photos can be staged',
    });
    // Before minModelSide, four pixels were a floor plan with confidence 0.99.
    assert.deepEqual(tiny, {
      isStageable: false,
      roomType: 'unknown',
      confidence: 0.99,
      details: 'Too small: 2×2, the short side must be at least 512 px; also blurred',
    });
  },
);
