import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { decodeForModel } from '../../src/analysis/model/decode-for-model.ts';
import { InferencePool } from '../../src/analysis/model/inference-pool.ts';
import {
  FEATURE_BLOCKS,
  type FeatureBlock,
  type ModelFeatures,
} from '../../src/analysis/model/model-features.ts';
import { NETWORK_INPUT_SIZE } from '../../src/analysis/model/network-input.ts';
import type { DetectedObject, RawImage } from '../../src/analysis/scene-types.ts';
import type { ManifestEntry } from './manifest.ts';

/** Bump when the features change meaning, so stale cache files are ignored. */
const FEATURE_VERSION = 'centernet-v1';

/** Cached model output for one photo. */
export interface CachedFeatures {
  blocks: Record<FeatureBlock, Float32Array>;
  detections: DetectedObject[];
}

interface CacheFile {
  blocks: Record<string, string>;
  detections: DetectedObject[];
}

/**
 * A change made to every photo before the network sees it (e.g. its furniture masked out), cached
 * apart from the photo's own features under `name`.
 */
export interface ImageVariant {
  /** Part of the cache key: bump it when the transform changes. */
  name: string;
  /** The changed image for entry `index` (its decoded pixels are handed in). */
  transform: (image: RawImage, index: number) => RawImage;
}

async function cachePath(
  cacheDir: string,
  file: string,
  inputSize: number,
  variant?: string,
): Promise<string> {
  const info = await stat(file);
  // Features at the network's own side keep the key they had before other sides existed.
  let version = inputSize === NETWORK_INPUT_SIZE ? FEATURE_VERSION : `${FEATURE_VERSION}@${inputSize}`;
  if (variant !== undefined) version += `#${variant}`;
  const key = createHash('sha1')
    .update(`${version}|${path.resolve(file)}|${info.size}|${info.mtimeMs}`)
    .digest('hex');
  return path.join(cacheDir, key.slice(0, 2), `${key}.json`);
}

async function readCache(file: string): Promise<CachedFeatures | null> {
  try {
    const json = JSON.parse(await readFile(file, 'utf8')) as CacheFile;
    const blocks = {} as Record<FeatureBlock, Float32Array>;
    for (const name of FEATURE_BLOCKS) {
      const b64 = json.blocks[name];
      if (b64 === undefined) return null;
      const bytes = Buffer.from(b64, 'base64');
      blocks[name] = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4).slice();
    }
    return { blocks, detections: json.detections };
  } catch {
    return null;
  }
}

/** Every block of an extraction that was asked for all of them (a `features` request). */
function everyBlock(features: ModelFeatures): CachedFeatures {
  const blocks = {} as Record<FeatureBlock, Float32Array>;
  for (const name of FEATURE_BLOCKS) {
    const block = features.blocks[name];
    if (!block) throw new Error(`the extraction lacks the feature block ${name}`);
    blocks[name] = block;
  }
  return { blocks, detections: features.detections };
}

async function writeCache(file: string, features: CachedFeatures): Promise<void> {
  const blocks: Record<string, string> = {};
  for (const name of FEATURE_BLOCKS) {
    const b = features.blocks[name];
    blocks[name] = Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64');
  }
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ blocks, detections: features.detections } satisfies CacheFile));
}

/** Cached features of each entry, null where not cached yet. */
export async function readCachedFeatures(
  entries: readonly ManifestEntry[],
  cacheDir: string,
  inputSize: number,
  variant?: string,
): Promise<(CachedFeatures | null)[]> {
  return Promise.all(
    entries.map(async (e) => readCache(await cachePath(cacheDir, e.absolutePath, inputSize, variant))),
  );
}

/**
 * Features for every entry (of its `variant` when given), from the cache where present, else from the
 * model on a pool of worker threads. Photos are read in place; only derived numbers are written to
 * `cacheDir`.
 */
export async function loadFeatures(
  entries: readonly ManifestEntry[],
  options: {
    cacheDir: string;
    inputSize: number;
    threads?: number;
    variant?: ImageVariant;
    log?: (line: string) => void;
  },
): Promise<CachedFeatures[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const { inputSize, variant } = options;
  const results = await readCachedFeatures(entries, options.cacheDir, inputSize, variant?.name);
  const missing = results.flatMap((r, i) => (r === null ? [i] : []));
  log(`features: ${entries.length - missing.length} cached, ${missing.length} to extract`);
  if (missing.length === 0) return results as CachedFeatures[];

  const pool = new InferencePool({ threads: options.threads, headPath: null, inputSize });
  const started = Date.now();
  let done = 0;
  try {
    await pool.ready;
    let next = 0;
    // A few more jobs than threads keep decoding (sharp, libuv pool) overlapped with inference.
    const lanes = Array.from({ length: 6 }, async () => {
      while (next < missing.length) {
        const i = missing[next++]!;
        const entry = entries[i]!;
        const decoded = await decodeForModel(await readFile(entry.absolutePath));
        const image = variant ? variant.transform(decoded, i) : decoded;
        const features = everyBlock(await pool.run('features', image));
        const file = await cachePath(options.cacheDir, entry.absolutePath, inputSize, variant?.name);
        await writeCache(file, features);
        results[i] = features;
        if (++done % 250 === 0 || done === missing.length) {
          const rate = done / ((Date.now() - started) / 1000);
          log(`features: ${done}/${missing.length} (${rate.toFixed(1)} img/s)`);
        }
      }
    });
    await Promise.all(lanes);
  } finally {
    await pool.close();
  }
  return results as CachedFeatures[];
}
