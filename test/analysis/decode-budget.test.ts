/** What a decode may cost in memory, told from the header, and the budget decodes share. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import sharp, { type Sharp } from 'sharp';

import { createAnalysisService, unanalyzable } from '../../src/analysis/analysis.service.ts';
import {
  createDecodeBudget,
  DecodeTooLargeError,
  estimateDecodeBytes,
} from '../../src/analysis/decode-budget.ts';
import { readImageHeader } from '../../src/analysis/image-quality.ts';
import type { RawImage } from '../../src/analysis/scene-types.ts';
import { decodeForTests, fakeClassifier, roomPhoto, serve, startServer } from './analysis-helpers.ts';

const MIB = 1024 * 1024;

/** A flat 100×100 picture (with alpha when `channels` is 4), for its encoder to write. */
function picture(channels: 3 | 4 = 3): Sharp {
  const background = { r: 120, g: 130, b: 140, alpha: 0.5 };
  return sharp({ create: { width: 100, height: 100, channels, background } });
}

void test('the estimate follows the format: 10,000 pixels cost what the measurements say', async () => {
  const cases: Array<[string, Promise<Buffer>, number]> = [
    ['baseline JPEG', picture().jpeg().toBuffer(), 5_000],
    ['progressive JPEG 4:2:0', picture().jpeg({ progressive: true }).toBuffer(), 35_000],
    [
      'progressive JPEG 4:4:4',
      picture().jpeg({ progressive: true, chromaSubsampling: '4:4:4' }).toBuffer(),
      65_000,
    ],
    ['WebP', picture().webp().toBuffer(), 5_000],
    ['PNG', picture().png().toBuffer(), 5_000],
    ['interlaced PNG, RGB', picture().png({ progressive: true }).toBuffer(), 36_000],
    [
      'interlaced PNG, 16-bit RGBA',
      picture(4).toColourspace('rgb16').png({ progressive: true }).toBuffer(),
      96_000,
    ],
    ['TIFF', picture().tiff().toBuffer(), 36_000],
    ['GIF', picture().gif().toBuffer(), 50_000],
    ['AVIF, 8 bits', picture().avif({ effort: 0 }).toBuffer(), 180_000],
    ['AVIF, 10 bits', picture().avif({ effort: 0, bitdepth: 10 }).toBuffer(), 250_000],
  ];
  for (const [name, encoded, bytes] of cases) {
    const input = await encoded;
    assert.equal(estimateDecodeBytes(await sharp(input).metadata()), bytes, name);
    assert.equal((await readImageHeader(input)).decodeBytes, bytes, name);
  }
});

/** A decode that starts (noted in `events`) and ends when the test says so. */
function heldDecodes() {
  const events: string[] = [];
  const ends = new Map<string, () => void>();
  const decode = (name: string) => async () => {
    events.push(name);
    await new Promise<void>((resolve) => ends.set(name, resolve));
    return name;
  };
  const end = async (name: string) => {
    ends.get(name)!();
    // Let the freed share reach the next decode.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { events, decode, end };
}

void test('one tenant’s large decodes do not hold up another’s: waiting tenants take turns', async () => {
  const budget = createDecodeBudget(100 * MIB);
  const { events, decode, end } = heldDecodes();
  // Each of a's decodes takes more than half the budget, so they run one at a time.
  const large = Array.from({ length: 10 }, (_, n) => budget.run(69 * MIB, 'a', decode(`a${n}`)));
  const small = budget.run(2 * MIB, 'b', decode('b0'));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(events, ['a0']);
  await end('a0');
  // a's next decode and b's start together: b does not wait for the nine of a's still in line.
  assert.deepEqual(events, ['a0', 'a1', 'b0']);
  await end('b0');
  assert.equal(await small, 'b0');
  for (let n = 1; n < 10; n++) await end(`a${n}`);
  assert.deepEqual(
    await Promise.all(large),
    events.filter((name) => name.startsWith('a')),
  );
});

void test('a decode that could never fit is refused at once, and a failed one gives its share back', async () => {
  const budget = createDecodeBudget(4 * MIB);
  let called = false;
  await assert.rejects(
    budget.run(4 * MIB + 1, 'a', async () => {
      called = true;
    }),
    (error: unknown) =>
      error instanceof DecodeTooLargeError && error.neededMiB === 5 && error.budgetMiB === 4,
  );
  assert.equal(called, false);
  await assert.rejects(
    budget.run(4 * MIB, 'a', () => Promise.reject(new Error('corrupt'))),
    /corrupt/,
  );
  // The whole budget is free again: a decode that needs all of it runs.
  assert.equal(await budget.run(4 * MIB, 'b', async () => 'whole budget'), 'whole budget');
});

void describe('the analyzer and its decode budget', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  before(async () => {
    server = await startServer({
      // 2000×2000 pixels of AVIF: about 69 MiB to decode, in a file of a few hundred bytes.
      '/small-file-big-decode.avif': serve(
        await sharp({ create: { width: 2000, height: 2000, channels: 3, background: '#808080' } })
          .avif({ effort: 0 })
          .toBuffer(),
        'image/avif',
      ),
      '/photo.jpg': serve(await roomPhoto(2000, 1500)),
    });
  });
  after(() => server.close());

  void test('an image whose decode exceeds the budget is an entry saying so, and is never decoded', async () => {
    const decoded: number[] = [];
    const service = createAnalysisService({
      classifier: fakeClassifier(),
      decode: (input: Buffer): Promise<RawImage> => {
        decoded.push(input.length);
        return decodeForTests(input);
      },
      allowPrivateHosts: true,
      decodeMemoryBytes: 64 * MIB,
    });
    const bomb = server.url('/small-file-big-decode.avif');
    const photo = server.url('/photo.jpg');
    const result = await service.analyze([bomb, photo]);
    assert.deepEqual(
      result.images[0],
      unanalyzable(
        bomb,
        "Too large to decode: this image would take about 69 MiB of memory to decode, more than the analyzer's 64 MiB; send a smaller copy",
      ),
    );
    // The 3-megapixel JPEG beside it (1.5 MiB to decode) is analyzed as usual.
    assert.equal(result.images[1]!.isStageable, true);
    assert.equal(decoded.length, 1);
  });
});
