import sharp from 'sharp';

import type { RawImage } from '../scene-types.ts';

/** Long side of the pixels handed to the model; the network stretches them to its own square. */
export const MODEL_MAX_SIDE = 512;

/**
 * Decodes any image sharp reads into the model's input: EXIF orientation applied, alpha flattened on
 * white (a transparent plan is a plan on paper), 8-bit RGB, long side at most 512 px and never enlarged.
 */
export async function decodeForModel(buffer: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(buffer, { failOn: 'error' })
    .rotate()
    .flatten({ background: '#ffffff' })
    .resize({ width: MODEL_MAX_SIDE, height: MODEL_MAX_SIDE, fit: 'inside', withoutEnlargement: true })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`expected 3 channels after decoding, got ${info.channels}`);
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
    width: info.width,
    height: info.height,
    channels: 3,
  };
}
