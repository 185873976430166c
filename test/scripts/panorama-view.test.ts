import { test } from 'node:test';
import assert from 'node:assert/strict';

import { perspectiveView, type RgbImage } from '../../scripts/lib/panorama-view.ts';

/**
 * A 720×360 panorama in four 90° bands of longitude, centred on the middle column: red ahead (yaw 0),
 * green to the right (90), blue behind (180, across the wrap), grey to the left (270). The sky half
 * is full strength, the floor half half as bright.
 */
function bandedPanorama(): RgbImage {
  const width = 720;
  const height = 360;
  const data = new Uint8Array(width * height * 3);
  const bands: [number, number, number][] = [
    [200, 0, 0],
    [0, 200, 0],
    [0, 0, 200],
    [100, 100, 100],
  ];
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) {
      const longitude = ((u + 0.5) / width) * 360 - 180;
      const band = Math.floor((((longitude + 45) % 360) + 360) / 90) % 4;
      const scale = v < height / 2 ? 1 : 0.5;
      data.set(
        bands[band]!.map((c) => c * scale),
        (v * width + u) * 3,
      );
    }
  }
  return { data, width, height };
}

const pixel = (image: RgbImage, x: number, y: number): number[] => [
  ...image.data.subarray((y * image.width + x) * 3, (y * image.width + x) * 3 + 3),
];

void test('a view looks where its yaw says: ahead, right, behind across the wrap, left', () => {
  const panorama = bandedPanorama();
  const centres = [0, 90, 180, 270].map((yawDegrees) => {
    const view = perspectiveView(panorama, { yawDegrees, hfovDegrees: 60, width: 64, height: 48 });
    assert.equal(view.data.length, 64 * 48 * 3);
    // In the middle column, a third of the way up and down the view (about 14° off the horizon).
    return [pixel(view, 32, 10), pixel(view, 32, 38)];
  });
  assert.deepEqual(centres, [
    [
      [200, 0, 0],
      [100, 0, 0],
    ],
    [
      [0, 200, 0],
      [0, 100, 0],
    ],
    [
      [0, 0, 200],
      [0, 0, 100],
    ],
    [
      [100, 100, 100],
      [50, 50, 50],
    ],
  ]);
});

void test('the field of view is as wide as asked: a 100° view ahead sees the bands at ±45°', () => {
  const view = perspectiveView(bandedPanorama(), {
    yawDegrees: 0,
    hfovDegrees: 100,
    width: 200,
    height: 100,
  });
  // Columns at ±50° (the edges) are in the side bands, those at ±40° still ahead.
  const focal = 100 / Math.tan((50 * Math.PI) / 180);
  const column = (degrees: number): number =>
    Math.round(100 + focal * Math.tan((degrees * Math.PI) / 180) - 0.5);
  assert.deepEqual(pixel(view, 0, 20), [100, 100, 100]);
  assert.deepEqual(pixel(view, column(-40), 20), [200, 0, 0]);
  assert.deepEqual(pixel(view, column(40), 20), [200, 0, 0]);
  assert.deepEqual(pixel(view, 199, 20), [0, 200, 0]);
});

/** A panorama whose every pixel is its column's grey level, given per column by `levelOf`. */
function columnPanorama(width: number, height: number, levelOf: (column: number) => number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) data.fill(levelOf(u), (v * width + u) * 3, (v * width + u + 1) * 3);
  }
  return { data, width, height };
}

void test('pixels are sampled between column centres: a ramp reads back where each view ray lands', () => {
  // 256 columns, grey level = column index: bilinear sampling reads the ray's column position itself.
  const panorama = columnPanorama(256, 128, (u) => u);
  const view = perspectiveView(panorama, { yawDegrees: 0, hfovDegrees: 60, width: 65, height: 33 });
  const focal = 32.5 / Math.tan(Math.PI / 6);
  const errors = Array.from({ length: 65 }, (_, i) => {
    const longitude = Math.atan2(i + 0.5 - 32.5, focal);
    const column = (longitude / (2 * Math.PI) + 0.5) * 256 - 0.5;
    return Math.abs(pixel(view, i, 16)[0]! - column);
  });
  // Rounding to a byte is all the error there is; half a column off, or nearest-neighbour, is not.
  assert.ok(Math.max(...errors) <= 0.5 + 1e-9, `largest error ${Math.max(...errors)}`);
  assert.deepEqual(pixel(view, 32, 16), [128, 128, 128]); // column 127.5: halfway between 127 and 128
});

void test('a view across the seam blends the last column with the first', () => {
  // Looking straight behind (yaw 180), the middle ray lands on the seam, half a column from either side.
  const panorama = columnPanorama(720, 360, (u) => (u === 719 ? 100 : u === 0 ? 200 : 0));
  const view = perspectiveView(panorama, { yawDegrees: 180, hfovDegrees: 10, width: 65, height: 33 });
  assert.deepEqual(pixel(view, 32, 16), [150, 150, 150]);
});

void test('a panorama whose bytes do not match its size, or a field of view of 180° or more, is refused', () => {
  const panorama = bandedPanorama();
  assert.throws(
    () =>
      perspectiveView({ ...panorama, height: 100 }, { yawDegrees: 0, hfovDegrees: 90, width: 8, height: 8 }),
    {
      message: 'panorama: data is not width × height × 3 bytes',
    },
  );
  for (const hfovDegrees of [0, 180, Number.NaN]) {
    assert.throws(() => perspectiveView(panorama, { yawDegrees: 0, hfovDegrees, width: 8, height: 8 }), {
      message: 'hfov must be between 0 and 180',
    });
  }
});
