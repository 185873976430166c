import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import {
  laplacianVariance,
  measureImageQuality,
  UndecodableImageError,
} from '../../src/analysis/image-quality.ts';
import { decideStageability } from '../../src/analysis/stageability.ts';
import { THRESHOLDS } from '../../src/analysis/thresholds.ts';
import { blurred, roomPhoto, solid, verdict } from './analysis-helpers.ts';

/** The photos the gates are tried on, generated once. */
const photos: Record<string, Buffer> = {};

before(async () => {
  photos.good = await roomPhoto(1024, 768);
  photos.tiny = await roomPhoto(320, 240);
  photos.black = await solid(800, 600, 4);
  photos.white = await solid(800, 600, 254);
  photos.dim = await roomPhoto(800, 600, { level: -120 });
  photos.blurred = await blurred(photos.good);
  photos.panorama = await roomPhoto(2048, 800);
  photos.portrait = await sharp(photos.good).withMetadata({ orientation: 6 }).jpeg().toBuffer();
});

async function decide(name: string) {
  return decideStageability(await measureImageQuality(photos[name]!), verdict());
}

void test('measures size, aspect, sharpness and exposure of a good photo', async () => {
  const quality = await measureImageQuality(photos.good!);
  assert.equal(quality.width, 1024);
  assert.equal(quality.height, 768);
  assert.equal(quality.format, 'jpeg');
  assert.equal(quality.shortSide, 768);
  assert.equal(quality.aspectRatio, 1024 / 768);
  assert.ok(quality.sharpness > 4 * THRESHOLDS.minSharpness, `sharpness ${quality.sharpness}`);
  assert.ok(quality.meanBrightness > 120 && quality.meanBrightness < 150, `mean ${quality.meanBrightness}`);
  assert.equal(quality.darkClipFraction, 0);
  assert.equal(quality.brightClipFraction, 0);
});

void test('applies EXIF orientation to the size it reports', async () => {
  const quality = await measureImageQuality(photos.portrait!);
  assert.equal(quality.width, 768);
  assert.equal(quality.height, 1024);
});

void test('good photo: stageable, with the room, the size and why', async () => {
  const decision = await decide('good');
  assert.equal(decision.isStageable, true);
  assert.equal(decision.roomType, 'bedroom');
  assert.equal(decision.details, 'Empty bedroom, 1024×768, sharp and well lit');
  assert.ok(decision.confidence > 0.85, `confidence ${decision.confidence}`);
});

void test('tiny photo: too small', async () => {
  const decision = await decide('tiny');
  assert.equal(decision.isStageable, false);
  assert.equal(decision.details, 'Too small: 320×240, the short side must be at least 512 px');
  assert.ok(decision.confidence > 0.95);
});

void test('black photo: too dark, and says it is blurred too', async () => {
  const decision = await decide('black');
  assert.equal(decision.isStageable, false);
  assert.equal(decision.details, 'Too dark: mean brightness 4/255; also blurred');
  assert.ok(decision.confidence > 0.95);
});

void test('dim photo: too dark from the mean brightness', async () => {
  const quality = await measureImageQuality(photos.dim!);
  const decision = decideStageability(quality, verdict());
  assert.equal(decision.isStageable, false);
  assert.equal(decision.details, `Too dark: mean brightness ${Math.round(quality.meanBrightness)}/255`);
  assert.ok(quality.meanBrightness < THRESHOLDS.minMeanBrightness);
});

void test('blown-out photo: overexposed', async () => {
  const decision = await decide('white');
  assert.equal(decision.isStageable, false);
  assert.equal(decision.details, 'Overexposed: mean brightness 254/255; also blurred');
});

void test('blurred photo: blurred, with its sharpness and the bar', async () => {
  const quality = await measureImageQuality(photos.blurred!);
  const decision = decideStageability(quality, verdict());
  assert.equal(decision.isStageable, false);
  assert.equal(
    decision.details,
    `Blurred: sharpness ${Math.round(quality.sharpness)}, at least 40 is needed`,
  );
  assert.ok(quality.sharpness < 5, `sharpness ${quality.sharpness}`);
});

void test('panorama: refused with its aspect ratio', async () => {
  const decision = await decide('panorama');
  assert.equal(decision.isStageable, false);
  assert.equal(
    decision.details,
    'Panorama (2.6:1, 2048×800): wide and 360° panoramas cannot be staged, use a regular photo',
  );
});

void test('an exact 2:1 picture is already a panorama; just under it is not', async () => {
  const twoToOne = await measureImageQuality(await roomPhoto(1200, 600));
  assert.equal(decideStageability(twoToOne, verdict()).isStageable, false);
  const under = await measureImageQuality(await roomPhoto(1190, 600));
  assert.equal(decideStageability(under, verdict()).isStageable, true);
});

void test('a file that is no image is undecodable, with the decoder reason', async () => {
  await assert.rejects(measureImageQuality(Buffer.from('definitely not an image')), UndecodableImageError);
  const truncated = photos.good!.subarray(0, 2000);
  await assert.rejects(measureImageQuality(truncated), UndecodableImageError);
});

void test('variance of the Laplacian: zero on flat or linear ramps, large on edges', () => {
  const flat = new Uint8Array(16).fill(100);
  assert.equal(laplacianVariance(flat, 4, 4), 0);
  const ramp = Uint8Array.from({ length: 25 }, (_, i) => (i % 5) * 10);
  assert.equal(laplacianVariance(ramp, 5, 5), 0);
  const checker = Uint8Array.from({ length: 25 }, (_, i) =>
    ((i % 5) + Math.floor(i / 5)) % 2 === 0 ? 0 : 255,
  );
  assert.ok(laplacianVariance(checker, 5, 5) > 10_000);
});
