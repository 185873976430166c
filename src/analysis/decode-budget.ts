import type { Metadata } from 'sharp';
import { createFairShare } from './fair-share.ts';

/**
 * What decoding an image costs in memory, told from its header alone, and a budget that images being
 * decoded at once share. A few kilobytes of AVIF may declare 14000×14000 pixels: the byte cap of the
 * download does not bound the decode, so the header's size and format have to.
 */

export const MIB = 1024 * 1024;

/** What the decodes running at once may take together unless configured otherwise. */
export const DEFAULT_DECODE_MEMORY_BYTES = 1024 * MIB;

/** Samples per pixel of a JPEG's planes (luma plus subsampled chroma), in halves, by subsampling. */
const JPEG_HALF_SAMPLES_PER_PIXEL: Record<string, number> = {
  '4:2:0': 3,
  '4:2:2': 4,
  '4:4:4': 6,
  '4:4:4:4': 8,
};

/**
 * The peak memory of decoding an image whose header is `metadata`, in bytes. Measured with this
 * build of sharp on images of 16–196 megapixels (docs/analyzer.md), and rounded up:
 * - baseline JPEG and WebP shrink while they load, and PNG streams row by row: under 0.5 byte/pixel;
 * - AVIF is decoded whole in the codec's own planes, then converted: 17.5 bytes/pixel at 8 bits,
 *   24.6 at 10 bits;
 * - GIF holds whole RGBA frames: 4.7 bytes/pixel;
 * - progressive JPEG keeps every DCT coefficient (2 bytes a sample) until its last scan;
 * - interlaced PNG needs the whole image before its first full row, and a TIFF may keep it in one
 *   strip: 1.15 × its samples, estimated as 1.2 ×.
 */
export function estimateDecodeBytes(metadata: Metadata): number {
  const pixels = (metadata.width ?? 0) * (metadata.height ?? 0);
  const channels = metadata.channels ?? 4;
  const bytesPerSample = (metadata.bitsPerSample ?? 8) > 8 || metadata.depth === 'ushort' ? 2 : 1;
  // Tenths of a byte per pixel, so that the estimate is exact integer arithmetic.
  const whole = 12 * channels * bytesPerSample;
  const { format, isProgressive } = metadata;
  let tenthsPerPixel = 5; // baseline JPEG, WebP, PNG
  if (format === 'heif') tenthsPerPixel = bytesPerSample === 2 ? 250 : 180;
  else if (format === 'gif') tenthsPerPixel = 50;
  else if (format === 'tiff' || (format === 'png' && isProgressive)) tenthsPerPixel = whole;
  else if (format === 'jpeg' && isProgressive) {
    const halfSamples = JPEG_HALF_SAMPLES_PER_PIXEL[metadata.chromaSubsampling ?? ''] ?? 2 * channels;
    tenthsPerPixel = 10 * halfSamples + 5;
  }
  return Math.ceil((pixels * tenthsPerPixel) / 10);
}

/** An image whose decode alone would need more memory than the whole budget. */
export class DecodeTooLargeError extends Error {
  constructor(
    readonly neededMiB: number,
    readonly budgetMiB: number,
  ) {
    super(`decoding would take about ${neededMiB} MiB, more than the budget of ${budgetMiB} MiB`);
  }
}

/**
 * Lets decodes run at once while their estimated memory fits the budget; the others wait, tenants
 * in turn ({@link createFairShare}), so one tenant's large images do not hold up another's.
 */
export interface DecodeBudget {
  /**
   * Runs `decode` for `owner` once `costBytes` fit beside the decodes running; throws
   * {@link DecodeTooLargeError} at once when they never would.
   */
  run<T>(costBytes: number, owner: string, decode: () => Promise<T>): Promise<T>;
}

export function createDecodeBudget(budgetBytes: number): DecodeBudget {
  // Counted in whole mebibytes; every decode holds at least one.
  const units = Math.floor(budgetBytes / MIB);
  const share = createFairShare(units);
  return {
    async run(costBytes, owner, decode) {
      const weight = Math.max(1, Math.ceil(costBytes / MIB));
      if (weight > units) throw new DecodeTooLargeError(weight, units);
      const release = await share.acquire(owner, weight);
      try {
        return await decode();
      } finally {
        release();
      }
    },
  };
}
