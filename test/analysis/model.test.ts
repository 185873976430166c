/**
 * The real vision model: CenterNet on the wasm backend in worker threads, the committed classifier
 * head and the drawing detector. Photos come from ../shared/eval/rooms-dev when present.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import sharp from 'sharp';

import { CenterNetModel } from '../../src/analysis/model/centernet-model.ts';
import { decodeFloat16, encodeFloat16 } from '../../src/analysis/model/float16-codec.ts';
import { createSceneClassifier, decodeForModel } from '../../src/analysis/model/index.ts';
import { InferencePool } from '../../src/analysis/model/inference-pool.ts';
import {
  extractFeatures,
  FEATURE_BLOCKS,
  iou,
  type ModelFeatures,
  parseDetections,
} from '../../src/analysis/model/model-features.ts';
import {
  DEFAULT_HEAD_PATH,
  featureVector,
  loadRoomHead,
  parseRoomHead,
  type RoomHeadFile,
} from '../../src/analysis/model/room-head.ts';
import type { SceneClassifier } from '../../src/analysis/scene-types.ts';
import { drawSyntheticFloorPlan } from '../../scripts/lib/synthetic-floor-plan.ts';

const DEV_DIR = path.resolve(import.meta.dirname, '../../../shared/eval/rooms-dev');
const hasDevSet = existsSync(path.join(DEV_DIR, 'manifest.csv'));

let classifier: SceneClassifier;

before(async () => {
  classifier = createSceneClassifier({ threads: 2 });
  await classifier.ready();
});

after(async () => {
  await classifier.close();
});

void test('decodeForModel applies the EXIF orientation and caps the long side at 512 px', async () => {
  // Left half red, right half blue, stored landscape with "rotate 90° clockwise to display".
  const width = 1200;
  const height = 600;
  const pixels = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++)
    pixels.set(i % width < width / 2 ? [255, 0, 0] : [0, 0, 255], i * 3);
  const jpeg = await sharp(pixels, { raw: { width, height, channels: 3 } })
    .jpeg()
    .withMetadata({ orientation: 6 })
    .toBuffer();

  const image = await decodeForModel(jpeg);

  assert.deepEqual([image.width, image.height, image.channels], [256, 512, 3]);
  assert.equal(image.data.length, 256 * 512 * 3);
  const at = (x: number, y: number): number[] =>
    Array.from(image.data.subarray((y * 256 + x) * 3, (y * 256 + x) * 3 + 3));
  // Rotated clockwise, the red left half is now on top.
  assert.ok(at(128, 64)[0]! > 200 && at(128, 64)[2]! < 60, `top should be red, got ${at(128, 64).join(',')}`);
  assert.ok(
    at(128, 448)[2]! > 200 && at(128, 448)[0]! < 60,
    `bottom should be blue, got ${at(128, 448).join(',')}`,
  );
});

void test('decodeForModel does not enlarge small images and flattens transparency on white', async () => {
  const png = await sharp({
    create: { width: 100, height: 40, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
  })
    .png()
    .toBuffer();

  const image = await decodeForModel(png);

  assert.deepEqual([image.width, image.height, image.channels], [100, 40, 3]);
  assert.deepEqual(Array.from(image.data.subarray(0, 3)), [255, 255, 255]);
});

void test('the model loads in worker threads and returns a consistent verdict', async () => {
  assert.equal(classifier.isReady(), true);
  const noise = Buffer.alloc(320 * 240 * 3);
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) % 251;
  const verdict = await classifier.classify({ data: noise, width: 320, height: 240, channels: 3 });

  const sceneSum = Object.values(verdict.sceneProbabilities).reduce((a, b) => a + b, 0);
  const roomSum = Object.values(verdict.roomProbabilities).reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(sceneSum - 1) < 1e-6, `scene probabilities sum to ${sceneSum}`);
  assert.ok(Math.abs(roomSum - 1) < 1e-6, `room probabilities sum to ${roomSum}`);
  assert.ok(verdict.inferenceMs > 0);
  assert.ok(verdict.personScore >= 0 && verdict.personScore <= 1);
});

void test('a drawn floor plan is a floor_plan and a blank page is other, classified concurrently', async () => {
  const blankPng = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#ffffff' } })
    .png()
    .toBuffer();
  const [plan, blank] = await Promise.all([
    decodeForModel(await drawSyntheticFloorPlan(7)).then((image) => classifier.classify(image)),
    decodeForModel(blankPng).then((image) => classifier.classify(image)),
  ]);

  assert.equal(plan.roomType, 'floor_plan');
  assert.equal(plan.scene, 'floor_plan');
  assert.equal(blank.roomType, 'other');
  assert.equal(blank.scene, 'other');
});

void test('inference runs off the event loop', async () => {
  const image = await decodeForModel(await drawSyntheticFloorPlan(11));
  let last = performance.now();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  await Promise.all(Array.from({ length: 6 }, () => classifier.classify(image)));
  const elapsed = performance.now() - started;
  clearInterval(timer);

  // Six inferences take well over a second of CPU; the main thread only copies messages. Run on
  // it, each would block the loop for its whole run: at least a sixth of the time the six take,
  // and 150 ms or more on any machine this runs on. A machine busy with other work may hold the
  // thread back for a while too, so the bound is the larger of 150 ms and a twelfth of the time.
  const bound = Math.max(150, elapsed / 12);
  assert.ok(
    longestGap < bound,
    `event loop blocked for ${longestGap.toFixed(0)} ms of ${elapsed.toFixed(0)} ms (bound ${bound.toFixed(0)} ms)`,
  );
});

void test('inference pools only the blocks the head reads, with the same values as a full extraction', async () => {
  const model = await CenterNetModel.load();
  const head = await loadRoomHead();
  const image = await decodeForModel(await drawSyntheticFloorPlan(5));

  const full = extractFeatures(model, image);
  const partial = extractFeatures(model, image, head.blocks);

  assert.deepEqual(Object.keys(full.blocks).sort(), [...FEATURE_BLOCKS].sort());
  // The head's blocks, and the class peaks the verdict reads itself; nothing else.
  assert.deepEqual(Object.keys(partial.blocks).sort(), [...new Set([...head.blocks, 'classMax'])].sort());
  assert.deepEqual(featureVector(partial.blocks, head.blocks), featureVector(full.blocks, head.blocks));
  assert.deepEqual(partial.detections, full.detections);
  assert.deepEqual(partial.statistics, full.statistics);
  assert.throws(() => featureVector(partial.blocks, ['headMax']), {
    message: 'the feature block headMax was not extracted',
  });
});

void test('the network runs at a smaller square: same blocks, detections still fractions of the image', async (t) => {
  const atFull = await CenterNetModel.load(512);
  const atSmall = await CenterNetModel.load(384);
  const plan = await decodeForModel(await drawSyntheticFloorPlan(5));

  const full = extractFeatures(atFull, plan);
  const small = extractFeatures(atSmall, plan);

  assert.deepEqual([atFull.inputSize, atSmall.inputSize], [512, 384]);
  for (const block of FEATURE_BLOCKS)
    assert.equal(small.blocks[block]!.length, full.blocks[block]!.length, `length of ${block}`);
  assert.notDeepEqual(small.blocks.headMean, full.blocks.headMean);

  if (!hasDevSet) {
    t.skip('../shared/eval/rooms-dev not present: boxes on a real photo not compared');
    return;
  }
  // The same toilet, found at both sides, in the same place of the picture.
  const photo = await decodeForModel(await readFile(path.join(DEV_DIR, 'bathroom/houses_361_bathroom.jpg')));
  const toilet = (features: ModelFeatures) => features.detections.find((d) => d.label === 'toilet')!;
  const a = toilet(extractFeatures(atFull, photo));
  const b = toilet(extractFeatures(atSmall, photo));
  assert.ok(a.score >= 0.5 && b.score >= 0.4, `toilet scores ${a.score} and ${b.score}`);
  const overlap = iou(a.box, b.box);
  assert.ok(overlap > 0.8, `the two toilet boxes overlap by ${overlap.toFixed(2)}`);
});

void test('the inference threads run the network at the side of the head they load', async (t) => {
  const direct = await CenterNetModel.load(384);
  const image = await decodeForModel(await drawSyntheticFloorPlan(9));
  const expected = extractFeatures(direct, image);
  // The committed head, said to be fitted at 384: its weights do not matter for the features.
  const headFile = path.join(await mkdtemp(path.join(tmpdir(), 'head-')), 'head.json');
  const committed = JSON.parse(await readFile(DEFAULT_HEAD_PATH, 'utf8')) as RoomHeadFile;
  await writeFile(headFile, JSON.stringify({ ...committed, inputSize: 384 }));
  t.after(() => rm(path.dirname(headFile), { recursive: true, force: true }));

  for (const options of [{ headPath: headFile }, { headPath: null, inputSize: 384 }] as const) {
    const pool = new InferencePool({ threads: 1, ...options });
    try {
      await pool.ready;
      const features = await pool.run('features', image);
      assert.deepEqual(features.blocks.headMean, expected.blocks.headMean, JSON.stringify(options));
      assert.deepEqual(features.blocks.classMax, expected.blocks.classMax);
      assert.deepEqual(features.detections, expected.detections);
    } finally {
      await pool.close();
    }
  }
});

void test('detections are read as fractions of the side the network ran at', () => {
  // One candidate row: x1, y1, x2, y2 in input pixels, score, COCO class (61 = toilet).
  const row = Float32Array.from([96, 48, 192, 240, 0.9, 61]);

  assert.deepEqual(parseDetections(row, 384), [
    { label: 'toilet', score: 0.9, box: { x: 0.25, y: 0.125, width: 0.25, height: 0.5 } },
  ]);
  assert.deepEqual(parseDetections(row, 512)[0]!.box, {
    x: 0.1875,
    y: 0.09375,
    width: 0.1875,
    height: 0.375,
  });
});

void test('the network refuses input sides it cannot run at', async () => {
  for (const side of [96, 400, 800]) {
    await assert.rejects(CenterNetModel.load(side), {
      message: `the network input size must be a multiple of 32 from 128 to 768, not ${side}`,
    });
  }
});

void test('a head file says which input side its features came from (512 when it does not say)', async () => {
  const file = JSON.parse(await readFile(DEFAULT_HEAD_PATH, 'utf8')) as RoomHeadFile;
  const { inputSize: _omitted, ...withoutSide } = file;

  assert.equal(parseRoomHead(withoutSide).inputSize, 512);
  assert.equal(parseRoomHead({ ...file, inputSize: 256 }).inputSize, 256);
  for (const bad of [400, 800, 0]) {
    assert.throws(() => parseRoomHead({ ...file, inputSize: bad }), {
      message: `the room classifier's inputSize must be a multiple of 32 from 128 to 768, not ${bad}`,
    });
  }
});

void test('a head file with a number that is not finite, or a threshold beyond 0–1, is refused', async () => {
  const file = JSON.parse(await readFile(DEFAULT_HEAD_PATH, 'utf8')) as RoomHeadFile;
  const row = Array.from(decodeFloat16(file.weights[0]!));
  const withWeight = (value: number): string[] => [
    encodeFloat16(Float32Array.from([value, ...row.slice(1)])),
    ...file.weights.slice(1),
  ];
  assert.equal(parseRoomHead({ ...file, weights: withWeight(1.5) }).weights[0]![0], 1.5);
  for (const bad of [
    { weights: withWeight(Number.NaN) },
    { weights: withWeight(1e6) }, // beyond float16: stored as Infinity
    { mean: encodeFloat16(Float32Array.from(decodeFloat16(file.mean), (v, i) => (i === 3 ? Infinity : v))) },
    { bias: [Number.NaN, ...file.bias.slice(1)] },
    { temperature: Infinity },
    { unknownBelow: 1.5 },
    { unknownBelow: -0.1 },
  ]) {
    assert.throws(() => parseRoomHead({ ...file, ...bad }), {
      message: 'the room classifier file is malformed',
    });
  }
});

const PHOTOS: { file: string; roomType: string; scene: string; object?: string }[] = [
  { file: 'bathroom/houses_361_bathroom.jpg', roomType: 'bathroom', scene: 'interior', object: 'toilet' },
  { file: 'kitchen/houses_49_kitchen.jpg', roomType: 'kitchen', scene: 'interior', object: 'refrigerator' },
  { file: 'bedroom/houses_121_bedroom.jpg', roomType: 'bedroom', scene: 'interior', object: 'bed' },
  { file: 'exterior/houses_109_frontal.jpg', roomType: 'exterior', scene: 'exterior' },
  { file: 'floor_plan/fpd_CubiCasa5K_download-2.jpg', roomType: 'floor_plan', scene: 'floor_plan' },
];

for (const photo of PHOTOS) {
  void test(`real photo ${photo.file} → ${photo.roomType}`, async (t) => {
    if (!hasDevSet) {
      t.skip('../shared/eval/rooms-dev not present');
      return;
    }
    const verdict = await classifier.classify(
      await decodeForModel(await readFile(path.join(DEV_DIR, photo.file))),
    );

    assert.equal(verdict.roomType, photo.roomType);
    assert.equal(verdict.scene, photo.scene);
    if (photo.object) assert.ok(verdict.objects.some((o) => o.label === photo.object && o.score >= 0.5));
  });
}
