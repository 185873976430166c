/**
 * The whole-image statistics the scene classifier and the drawing rule read, on pictures small
 * enough to count by hand.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { measureImage } from '../../src/analysis/model/image-statistics.ts';
import type { RawImage } from '../../src/analysis/scene-types.ts';

/** A width×height RGB picture whose pixel at (x, y) is `colour(x, y)`. */
function picture(width: number, height: number, colour: (x: number, y: number) => number[]): RawImage {
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) data.set(colour(x, y), (y * width + x) * 3);
  }
  return { data, width, height, channels: 3 };
}

const WHITE = [255, 255, 255];
const BLACK = [0, 0, 0];
/** Luminance of white as the statistics compute it (Rec. 601 weights, 0..1). */
const WHITE_LUMINANCE = (0.299 * 255 + 0.587 * 255 + 0.114 * 255) / 255;

void test('a blank page is all flat, white, unsaturated paper of one colour', () => {
  const stats = measureImage(picture(10, 10, () => WHITE));

  assert.deepEqual(stats, {
    flatFraction: 1,
    whiteFraction: 1,
    topColoursCoverage: 1,
    paletteSize: 1 / 4096,
    meanSaturation: 0,
    lowSaturationFraction: 1,
    thinDarkFraction: 0,
    edgeFraction: 0,
    skyTopFraction: 1,
    greenFraction: 0,
    topBottomContrast: 0,
    meanLuminance: WHITE_LUMINANCE,
  });
});

for (const line of ['vertical', 'horizontal'] as const) {
  void test(`a one-pixel ${line} dark line on white counts as thin dark pixels and edges on both sides`, () => {
    // 10×10 white with column (or row) 5 black. The neighbour pass covers the 9×9 pixels that have a
    // right and a lower neighbour; thin lines are looked for 2 px away from every border (2–7).
    const stats = measureImage(
      picture(10, 10, (x, y) => ((line === 'vertical' ? x : y) === 5 ? BLACK : WHITE)),
    );

    assert.equal(stats.thinDarkFraction, 6 / 81); // the line's pixels 2–7
    assert.equal(stats.edgeFraction, 18 / 81); // lines 4 and 5, pixels 0–8 along them
    assert.equal(stats.flatFraction, 63 / 81);
    assert.equal(stats.whiteFraction, 90 / 100);
    assert.equal(stats.topColoursCoverage, 1);
    assert.equal(stats.paletteSize, 2 / 4096); // white alone covers 90 %, under 95 %
    assert.ok(Math.abs(stats.meanLuminance - 0.9 * WHITE_LUMINANCE) < 1e-12);
    if (line === 'vertical') {
      assert.equal(stats.skyTopFraction, 18 / 20); // the top quarter is rows 0–1
      assert.equal(stats.topBottomContrast, 0);
    } else {
      assert.equal(stats.skyTopFraction, 1);
      // Row 5 is in neither the top third (rows 0–2) nor the bottom one (rows 7–9).
      assert.equal(stats.topBottomContrast, 0);
    }
  });
}

void test('a two-pixel line is thin too: each of its pixels has light within 2 px on both sides', () => {
  const stats = measureImage(picture(10, 10, (_, y) => (y === 5 || y === 6 ? BLACK : WHITE)));

  assert.equal(stats.thinDarkFraction, 12 / 81); // rows 5 and 6, columns 2–7
});

void test('a step of more than 2 levels in any one channel, right or below, is not flat', () => {
  for (const channel of [0, 1, 2]) {
    for (const direction of ['right', 'below'] as const) {
      for (const step of [2, 3]) {
        const stats = measureImage(
          picture(6, 6, (x, y) => {
            const colour = [100, 100, 100];
            colour[channel]! += step * (direction === 'right' ? x : y);
            return colour;
          }),
        );
        const expected = step <= 2 ? 1 : 0;
        assert.equal(stats.flatFraction, expected, `channel ${channel}, ${direction}, step ${step}`);
      }
    }
  }
});

void test('sky over lawn: bluish bright top, green saturated bottom, brighter top than bottom', () => {
  // 8 wide, 12 high: rows 0–5 sky blue, rows 6–11 lawn green.
  const sky = [150, 200, 255];
  const lawn = [40, 160, 40];
  const stats = measureImage(picture(8, 12, (_, y) => (y < 6 ? sky : lawn)));
  const luminance = ([r, g, b]: number[]) => (0.299 * r! + 0.587 * g! + 0.114 * b!) / 255;

  assert.equal(stats.skyTopFraction, 1);
  assert.equal(stats.greenFraction, 0.5);
  assert.equal(stats.whiteFraction, 0);
  assert.equal(stats.edgeFraction, 7 / 77); // row 5 meets the lawn below it, columns 0–6
  assert.equal(stats.flatFraction, 70 / 77);
  assert.equal(stats.topColoursCoverage, 1);
  // The top third (rows 0–3) is all sky and the bottom third (rows 8–11) all lawn.
  assert.ok(Math.abs(stats.topBottomContrast - (luminance(sky) - luminance(lawn))) < 1e-6);
  assert.ok(Math.abs(stats.meanSaturation - ((255 - 150) / 255 + (160 - 40) / 160) / 2) < 1e-12);
});

void test('pictures too small for a neighbour pass still measure', () => {
  const stats = measureImage(picture(1, 1, () => [200, 200, 200]));

  assert.equal(stats.flatFraction, 0);
  assert.equal(stats.edgeFraction, 0);
  assert.equal(stats.thinDarkFraction, 0);
  assert.equal(stats.lowSaturationFraction, 1);
});
