import sharp from 'sharp';

import { MODEL_INPUT_LONG_SIDE, type RawImage } from '../scene-types.ts';

/**
 * Decodes any image sharp reads into the model's input: EXIF orientation applied, alpha flattened on
 * white (a transparent plan is a plan on paper), 8-bit RGB, long side at most 512 px and never enlarged.
 */
export async function decodeForModel(buffer: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(buffer, { failOn: 'error' })
    .rotate()
    .flatten({ background: '#ffffff' })
    // The network stretches these pixels to its own square input.
    .resize({
      width: MODEL_INPUT_LONG_SIDE,
      height: MODEL_INPUT_LONG_SIDE,
      fit: 'inside',
      withoutEnlargement: true,
    })
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
