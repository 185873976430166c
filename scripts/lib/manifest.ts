import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { MODEL_INPUT_LONG_SIDE } from '../../src/analysis/scene-types.ts';
import { readCsv } from './csv.ts';

/** A labelled folder that is not there (no `manifest.csv` at `dir`): the scripts answer it in one line. */
export class MissingManifestError extends Error {
  constructor(readonly dir: string) {
    super(
      `${path.join(dir, 'manifest.csv')} does not exist: a labelled folder needs one, with columns file,label`,
    );
  }
}

/** One labelled photo of a dataset folder. */
export interface ManifestEntry {
  /** Path as written in the manifest, relative to the folder. */
  file: string;
  absolutePath: string;
  label: string;
  source: string;
  /** The `empty_room` column when it says `yes` or `no` (absent for `unknown` or no column). */
  emptyRoom?: boolean;
  /** The photo's long side in pixels, from the `width` and `height` columns when both are numbers. */
  longSide?: number;
}

/**
 * The long side of the picture the network is given for `entry` (decodeForModel never enlarges, and
 * shrinks to MODEL_INPUT_LONG_SIDE), for reading cached features as the service reads the photo;
 * a manifest without sizes is taken to hold photos at least that large.
 */
export function pictureLongSide(entry: ManifestEntry): number {
  return Math.min(entry.longSide ?? MODEL_INPUT_LONG_SIDE, MODEL_INPUT_LONG_SIDE);
}

/**
 * Reads `<dir>/manifest.csv` (a header with at least `file` and `label`; `source` and `empty_room`
 * are read when present). A missing manifest, a row
 * without a file or a label, or a manifest of no rows is refused with the line at fault: the scripts
 * that read it run for minutes, and should not stop half-way on a photo named `undefined`.
 */
export async function readManifest(dir: string): Promise<ManifestEntry[]> {
  const manifest = path.join(dir, 'manifest.csv');
  let text: string;
  try {
    text = await readFile(manifest, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new MissingManifestError(dir);
  }
  const rows = readCsv(text, manifest, ['file', 'label']);
  const entries = rows.map(({ line, cells }) => {
    const { file = '', label = '', source = '' } = cells;
    if (file === '' || label === '') throw new Error(`${manifest} line ${line}: needs a file and a label`);
    const empty = (cells.empty_room ?? '').toLowerCase();
    const entry: ManifestEntry = { file, absolutePath: path.resolve(dir, file), label, source };
    if (empty === 'yes' || empty === 'no') entry.emptyRoom = empty === 'yes';
    const [width, height] = [Number(cells.width), Number(cells.height)];
    if (width > 0 && height > 0) entry.longSide = Math.max(width, height);
    return entry;
  });
  if (entries.length === 0) throw new Error(`${manifest} lists no photos`);
  return entries;
}
