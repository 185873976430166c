/**
 * What `npm run train` and `npm run eval` say when their labelled photos are not there: one line
 * naming what they need, how to give it and where the layout and sources are described, and exit
 * code 2, instead of a stack trace (docs/analyzer-model.md, "The photos").
 */
import path from 'node:path';

import { MissingManifestError, readManifest, type ManifestEntry } from './manifest.ts';

/** Where the folder layout and the photos' sources are described. */
export const PHOTOS_DOC = 'docs/analyzer-model.md#the-photos';

/** The exit code of a script run without its data, as of a command called wrongly. */
export const EXIT_NO_PHOTOS = 2;

const LAYOUT = 'the photos and a manifest.csv with columns file,label';

/** The line of `npm run train` when `dir` holds no manifest; `given` when --data named it. */
export const missingTrainingPhotos = (dir: string, given: boolean): string =>
  `train: no labelled photos in ${path.resolve(dir)}${given ? '' : ' (the default)'}: ` +
  `give a folder with --data DIR holding ${LAYOUT}[,source]; ${PHOTOS_DOC} says where to get them`;

/** The line of `npm run eval` when `dir` holds no manifest, or when no folder was given. */
export const missingEvalPhotos = (dir: string | undefined): string =>
  `eval: ${dir === undefined ? 'no folder given' : `no labelled photos in ${path.resolve(dir)}`}: ` +
  `npm run eval -- DIR [--head file] [--threads n] [--verbose], DIR holding ${LAYOUT}[,empty_room]; ` +
  `${PHOTOS_DOC} says where to get them`;

/** Prints `line` and ends the script with EXIT_NO_PHOTOS. */
export function exitWithoutPhotos(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(EXIT_NO_PHOTOS);
}

/** `readManifest(dir)`, or `line(dir)` and exit code 2 when the folder or its manifest is missing. */
export async function readManifestOrExit(
  dir: string,
  line: (dir: string) => string,
): Promise<ManifestEntry[]> {
  try {
    return await readManifest(dir);
  } catch (error) {
    if (error instanceof MissingManifestError) exitWithoutPhotos(line(dir));
    throw error;
  }
}
