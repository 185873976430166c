import sharp, { type Metadata } from 'sharp';
import { estimateDecodeBytes } from './decode-budget.ts';
import type { RawImage } from './scene-types.ts';
import { THRESHOLDS, type Thresholds } from './thresholds.ts';

/** What the quality gates look at, measured once per image. */
export interface ImageQuality {
  /** Size as displayed, EXIF orientation applied. */
  width: number;
  height: number;
  /** Decoder's name of the format (jpeg, png, webp, heif, gif, tiff…). */
  format: string;
  shortSide: number;
  /** Long side / short side (≥ 1). */
  aspectRatio: number;
  /** Variance of the Laplacian on the grey copy (higher is sharper). */
  sharpness: number;
  /** Mean grey level, 0–255. */
  meanBrightness: number;
  /** Fraction of pixels at or below the dark clip level. */
  darkClipFraction: number;
  /** Fraction of pixels at or above the bright clip level. */
  brightClipFraction: number;
}

/** The size and format an encoded image declares, EXIF orientation applied. */
export interface ImageHeader {
  width: number;
  height: number;
  format: string;
  /** The estimated peak memory of decoding it ({@link estimateDecodeBytes}). */
  decodeBytes: number;
}

/** The picture could not be decoded (corrupt, truncated, or a format sharp does not read). */
export class UndecodableImageError extends Error {}

// Decompression bombs: a 25 MiB file may claim gigapixels; 200 MP covers every camera sold.
const MAX_INPUT_PIXELS = 200_000_000;

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // sharp's messages name the problem in their first line; the rest is libvips detail.
  return message.split('\n')[0]!.slice(0, 160);
}

/** Wraps a decoder's error (sharp's, or the model decoder's) as an undecodable image. */
export function asUndecodable(error: unknown): UndecodableImageError {
  return error instanceof UndecodableImageError ? error : new UndecodableImageError(reasonOf(error));
}

/**
 * Recognises by their first bytes the formats the analyzer reads: JPEG, PNG, GIF, WebP, AVIF (and
 * HEIC, which the bundled decoder then refuses) and TIFF.
 */
export function looksLikeImage(head: Buffer): boolean {
  const ascii = (from: number, to: number) => head.subarray(from, to).toString('latin1');
  return (
    (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) || // JPEG
    ascii(0, 8) === '\x89PNG\r\n\x1a\n' ||
    ascii(0, 4) === 'GIF8' ||
    (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') ||
    ascii(4, 8) === 'ftyp' || // AVIF, HEIC
    ascii(0, 4) === 'II*\0' ||
    ascii(0, 4) === 'MM\0*' // TIFF
  );
}

/**
 * Reads an image's header only (cheap); throws {@link UndecodableImageError} for anything unreadable.
 * Bytes of another format are refused before sharp reads them, whatever the server called them:
 * sharp also reads SVG, PDF and more, which are no photographs and bring parsers of their own (an
 * SVG is XML that may refer to other files).
 */
export async function readImageHeader(input: Buffer): Promise<ImageHeader> {
  if (!looksLikeImage(input)) {
    throw new UndecodableImageError('not a JPEG, PNG, WebP, AVIF, GIF or TIFF file');
  }
  let metadata: Metadata;
  try {
    metadata = await sharp(input, { autoOrient: true }).metadata();
  } catch (error) {
    throw new UndecodableImageError(reasonOf(error));
  }
  const { width, height } = metadata.autoOrient;
  if (!(width > 0 && height > 0)) throw new UndecodableImageError('the image declares no size');
  if (width * height > MAX_INPUT_PIXELS) {
    throw new UndecodableImageError(`${width}×${height} is more pixels than the analyzer decodes`);
  }
  return { width, height, format: metadata.format, decodeBytes: estimateDecodeBytes(metadata) };
}

/**
 * Decodes an image as the model's decoder does (oriented, alpha on white, RGB, long side at most
 * `measureLongSide`, never enlarged). The service measures on the model's own copy instead, so an
 * image is decoded once; this is for measuring without the model.
 */
export async function decodeForMeasuring(
  input: Buffer,
  thresholds: Thresholds = THRESHOLDS,
): Promise<RawImage> {
  try {
    const side = thresholds.measureLongSide;
    const { data, info } = await sharp(input, {
      autoOrient: true,
      failOn: 'error',
      limitInputPixels: MAX_INPUT_PIXELS,
    })
      .flatten({ background: '#ffffff' })
      .resize({ width: side, height: side, fit: 'inside', withoutEnlargement: true })
      .toColourspace('srgb')
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return {
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      width: info.width,
      height: info.height,
      channels: 3,
    };
  } catch (error) {
    throw new UndecodableImageError(reasonOf(error));
  }
}

/**
 * Measures sharpness and exposure on a decoded copy and combines them with the header's size. The
 * copy must be the fixed-size one (long side `measureLongSide`, or the whole image when smaller),
 * because the Laplacian's variance depends on scale; a smaller copy is re-made here from `input`.
 */
export async function measureImageQuality(
  input: Buffer,
  options: { header?: ImageHeader; decoded?: RawImage; thresholds?: Thresholds } = {},
): Promise<ImageQuality> {
  const thresholds = options.thresholds ?? THRESHOLDS;
  const header = options.header ?? (await readImageHeader(input));
  const expectedLongSide = Math.min(thresholds.measureLongSide, Math.max(header.width, header.height));
  let copy = options.decoded;
  if (!copy || Math.abs(Math.max(copy.width, copy.height) - expectedLongSide) > 1) {
    copy = await decodeForMeasuring(input, thresholds);
  }
  const grey = greyOf(copy);
  const shortSide = Math.min(header.width, header.height);
  return {
    width: header.width,
    height: header.height,
    format: header.format,
    shortSide,
    aspectRatio: Math.max(header.width, header.height) / shortSide,
    sharpness: laplacianVariance(grey, copy.width, copy.height),
    ...exposureOf(grey, thresholds),
  };
}

/** Rec. 601 luma of an RGB copy, one byte per pixel. */
function greyOf(image: RawImage): Uint8Array {
  const { data } = image;
  const grey = new Uint8Array(image.width * image.height);
  for (let p = 0, i = 0; p < grey.length; p++, i += 3) {
    grey[p] = Math.round(0.299 * data[i]! + 0.587 * data[i + 1]! + 0.114 * data[i + 2]!);
  }
  return grey;
}

function exposureOf(
  grey: Uint8Array,
  thresholds: Thresholds,
): Pick<ImageQuality, 'meanBrightness' | 'darkClipFraction' | 'brightClipFraction'> {
  const histogram = new Uint32Array(256);
  for (const level of grey) histogram[level]! += 1;
  let sum = 0;
  let dark = 0;
  let bright = 0;
  for (let level = 0; level < 256; level++) {
    const count = histogram[level]!;
    sum += level * count;
    if (level <= thresholds.darkClipLevel) dark += count;
    if (level >= thresholds.brightClipLevel) bright += count;
  }
  const total = grey.length;
  if (total === 0) return { meanBrightness: 0, darkClipFraction: 1, brightClipFraction: 0 };
  return { meanBrightness: sum / total, darkClipFraction: dark / total, brightClipFraction: bright / total };
}

/**
 * Variance of the 4-neighbour Laplacian (0 1 0 / 1 −4 1 / 0 1 0) over the interior pixels of a grey
 * image: the classic focus measure; edges make it large, blur and flat surfaces keep it small.
 */
export function laplacianVariance(grey: Uint8Array, width: number, height: number): number {
  if (width < 3 || height < 3) return 0;
  let sum = 0;
  let sumSquares = 0;
  let count = 0;
  for (let y = 1; y < height - 1; y++) {
    const row = y * width;
    for (let x = 1; x < width - 1; x++) {
      const i = row + x;
      const value = grey[i - width]! + grey[i + width]! + grey[i - 1]! + grey[i + 1]! - 4 * grey[i]!;
      sum += value;
      sumSquares += value * value;
      count += 1;
    }
  }
  const mean = sum / count;
  return sumSquares / count - mean * mean;
}
