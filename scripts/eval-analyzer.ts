/**
 * Runs the vision model directly (no HTTP) on a labelled folder and prints how often it is right.
 *
 *   npm run eval -- <dir> [--head <room-classifier.json>] [--threads <n>] [--verbose]
 *
 * <dir>/manifest.csv: file,label[,…] (docs/analyzer-model.md, "The photos"); `hallway` counts as right
 * for `entrance_hall` or `corridor`. With an `empty_room` column (yes/no/unknown) two more lines:
 * `empty-room room type: answered A/N, right R/A (P%)` over the rows marked yes (`unknown` is no
 * answer) and `furnished flag: right K/N (P%)` over the rows marked yes or no. The last line is
 * `room type accuracy: NN.N% (n=N)`. Without a folder, or without its manifest, one line says what is
 * needed, exit code 2.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { createSceneClassifier, decodeForModel } from '../src/analysis/model/index.ts';
import type { RoomType, SceneKind, SceneVerdict } from '../src/analysis/scene-types.ts';
import { exitWithoutPhotos, missingEvalPhotos, readManifestOrExit } from './lib/missing-photos.ts';
import { wholeNumber } from './lib/number-option.ts';
import { emptyRoomLines, printConfusion, type Outcome } from './lib/eval-report.ts';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    head: { type: 'string' },
    threads: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const dir = positionals[0];
if (!dir) exitWithoutPhotos(missingEvalPhotos(undefined));

/** Room types a manifest label accepts. */
function accepted(label: string): RoomType[] {
  return label === 'hallway' ? ['entrance_hall', 'corridor'] : [label as RoomType];
}

/** Scene kind a manifest label implies. */
function expectedScene(label: string): SceneKind {
  if (label === 'exterior' || label === 'floor_plan' || label === 'other') return label;
  return 'interior';
}

// Checked before the model loads: `Number('two')` would ask the pool for NaN threads.
const threads = args.threads === undefined ? undefined : wholeNumber('--threads', args.threads, 1, 64);
const entries = await readManifestOrExit(dir, missingEvalPhotos);
const classifier = createSceneClassifier({
  threads,
  headPath: args.head === undefined ? undefined : path.resolve(args.head),
});
const loadStarted = performance.now();
await classifier.ready();
const loadMs = performance.now() - loadStarted;

const started = performance.now();
let inferenceMs = 0;
let next = 0;
const outcomes: Outcome[] = new Array<Outcome>(entries.length);
// A few lanes more than threads so that decoding overlaps with inference, as in the service.
await Promise.all(
  Array.from({ length: 4 }, async () => {
    while (next < entries.length) {
      const i = next++;
      const entry = entries[i]!;
      let verdict: SceneVerdict | null = null;
      let error: string | undefined;
      try {
        verdict = await classifier.classify(await decodeForModel(await readFile(entry.absolutePath)));
        inferenceMs += verdict.inferenceMs;
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
      }
      const predicted: RoomType = verdict?.roomType ?? 'unknown';
      outcomes[i] = {
        file: entry.file,
        label: entry.label,
        predicted,
        confidence: verdict?.roomConfidence ?? 0,
        correct: accepted(entry.label).includes(predicted),
        sceneCorrect: verdict?.scene === expectedScene(entry.label),
        scene: verdict?.scene ?? 'other',
        furnished: verdict?.furnished,
        emptyRoom: entry.emptyRoom,
        error,
      };
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
await classifier.close();

printConfusion(outcomes, { verbose: args.verbose });
console.log(
  `speed: ${(entries.length / seconds).toFixed(2)} images/s (decode + model, ${entries.length} images in ` +
    `${seconds.toFixed(1)} s), ${(inferenceMs / Math.max(1, entries.length)).toFixed(0)} ms model time per image, ` +
    `model load ${(loadMs / 1000).toFixed(1)} s`,
);
for (const line of emptyRoomLines(outcomes)) console.log(line);
const right = outcomes.filter((o) => o.correct).length;
console.log(
  `room type accuracy: ${((100 * right) / Math.max(1, outcomes.length)).toFixed(1)}% (n=${outcomes.length})`,
);
