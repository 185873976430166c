/**
 * Empty rooms with the real vision model, on the furnished/defurnished pairs of ../shared/eval/empty-dev:
 * the furnished flag of every photo, the room type of an emptied room (its own or `unknown`, never
 * another), and through the HTTP route what a person reads about each emptied room and the furnished
 * photo with a passer-by. Skipped, with the reason, where the photos are not there.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

import { readManifest, type ManifestEntry } from '../../scripts/lib/manifest.ts';
import type { AnalysisResult } from '../../src/analysis/analysis.schemas.ts';
import { createAnalysisService } from '../../src/analysis/analysis.service.ts';
import { createSceneClassifier, decodeForModel } from '../../src/analysis/model/index.ts';
import type { SceneClassifier, SceneVerdict } from '../../src/analysis/scene-types.ts';
import { buildAnalysisApp, mintToken, serve, startServer } from './analysis-helpers.ts';

const EMPTY_DEV = fileURLToPath(new URL('../../../shared/eval/empty-dev/', import.meta.url));
const skip = existsSync(`${EMPTY_DEV}manifest.csv`) ? false : `no photos: ${EMPTY_DEV} is absent`;
/** The furnished view with a person walking through the doorway. */
const PASSER_BY = 'mp_27750c84_eq_yaw000_furnished.jpg';

let photos: ManifestEntry[] = [];
const verdicts = new Map<string, SceneVerdict>();
let classifier: SceneClassifier;
let server: Awaited<ReturnType<typeof startServer>>;
let app: FastifyInstance;

before(async () => {
  if (skip) return;
  photos = await readManifest(EMPTY_DEV);
  classifier = createSceneClassifier({ threads: 2 });
  await classifier.ready();
  const routes: Record<string, ReturnType<typeof serve>> = {};
  for (const photo of photos) {
    const buffer = await readFile(photo.absolutePath);
    routes[`/${photo.file}`] = serve(buffer);
    verdicts.set(photo.file, await classifier.classify(await decodeForModel(buffer)));
  }
  server = await startServer(routes);
  const analysis = createAnalysisService({ classifier, decode: decodeForModel, allowPrivateHosts: true });
  app = await buildAnalysisApp(analysis);
});

after(async () => {
  await app?.close();
  await classifier?.close();
  await server?.close();
});

void test('every photo of the pairs is called furnished or empty as it is', { skip }, () => {
  assert.equal(photos.length, 14);
  for (const photo of photos) {
    assert.notEqual(photo.emptyRoom, undefined, `${photo.file} has no empty_room`);
    const verdict = verdicts.get(photo.file)!;
    assert.equal(verdict.furnished, !photo.emptyRoom, `${photo.file}: furnished ${verdict.furnished}`);
  }
});

void test('an emptied room is given its own type or `unknown`, never another', { skip }, () => {
  for (const photo of photos.filter((p) => p.emptyRoom)) {
    const { roomType, roomConfidence } = verdicts.get(photo.file)!;
    assert.ok(
      roomType === photo.label || roomType === 'unknown',
      `${photo.file}: a ${photo.label} called ${roomType} (${roomConfidence.toFixed(2)})`,
    );
  }
  // The emptied bedrooms have nothing left that names them: white walls, a door, a wardrobe front.
  const bedrooms = photos.filter((p) => p.emptyRoom && p.label === 'bedroom');
  assert.deepEqual(
    bedrooms.map((p) => verdicts.get(p.file)!.roomType),
    bedrooms.map(() => 'unknown'),
  );
});

void test(
  'the emptied kitchens keep fixtures the detector sees, and are neither furnished nor bathrooms',
  { skip },
  () => {
    const kitchens = photos.filter((p) => p.emptyRoom && p.label === 'kitchen');
    assert.equal(kitchens.length, 2);
    for (const photo of kitchens) {
      const verdict = verdicts.get(photo.file)!;
      const fixtures = verdict.objects.filter((o) =>
        ['oven', 'refrigerator', 'microwave', 'sink'].includes(o.label),
      );
      assert.ok(fixtures.length > 0, `${photo.file}: no fixture detected`);
      assert.equal(verdict.furnished, false, `${photo.file}: fixtures counted as furniture`);
      assert.equal(verdict.roomType, 'kitchen', `${photo.file}: a kitchen called ${verdict.roomType}`);
    }
    // No emptied room, kitchen or not, is called a bathroom: none has a toilet.
    for (const photo of photos.filter((p) => p.emptyRoom)) {
      assert.notEqual(verdicts.get(photo.file)!.roomType, 'bathroom', photo.file);
    }
  },
);

void test(
  'through the route: empty rooms are stageable as they are, the passer-by is not',
  { skip },
  async () => {
    const asked = [...photos.filter((p) => p.emptyRoom), ...photos.filter((p) => p.file === PASSER_BY)];
    const response = await app.inject({
      method: 'POST',
      url: '/analysis/stageability/multiple',
      headers: { authorization: `Bearer ${await mintToken()}`, 'content-type': 'application/json' },
      payload: { imageUrls: asked.map((p) => server.url(`/${p.file}`)) },
    });
    assert.equal(response.statusCode, 200);
    const { images } = response.json<AnalysisResult>();
    asked.forEach((photo, i) => {
      const image = images[i]!;
      if (photo.file === PASSER_BY) {
        assert.equal(image.isStageable, false);
        assert.equal(image.details, 'Person in frame: staging needs a photo without people');
        return;
      }
      assert.equal(image.isStageable, true, `${photo.file}: ${image.details}`);
      const room = image.roomType === 'unknown' ? 'room \\(type unclear\\)' : photo.label.replace('_', ' ');
      assert.match(image.details, new RegExp(`^Empty ${room}, \\d+×\\d+, sharp and well lit$`), photo.file);
    });
  },
);

void test(
  'a furnished kitchen with a coffee machine and a bread box needs furniture removal',
  { skip },
  async () => {
    const photo = 'mp_d62db60b_skybox2_furnished.jpg';
    const response = await app.inject({
      method: 'POST',
      url: '/analysis/stageability/multiple',
      headers: { authorization: `Bearer ${await mintToken()}`, 'content-type': 'application/json' },
      payload: { imageUrls: [server.url(`/${photo}`)] },
    });
    assert.equal(response.statusCode, 200);
    assert.match(
      response.json<AnalysisResult>().images[0]!.details,
      /^Furnished kitchen, \d+×\d+, sharp and well lit — staging needs furniture removal$/,
    );
  },
);
