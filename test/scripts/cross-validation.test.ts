/** `npm run train`'s stratified splits and folds, and `--cross-validate k`'s out-of-fold predictions. */
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { crossValidate, crossValidationReport } from '../../scripts/lib/cross-validation.ts';
import type { CachedFeatures } from '../../scripts/lib/feature-cache.ts';
import type { ManifestEntry } from '../../scripts/lib/manifest.ts';
import {
  buildDesign,
  seededRandom,
  stratifiedFolds,
  stratifiedSplit,
} from '../../scripts/lib/training-data.ts';

function entry(label: string, source: string, n: number): ManifestEntry {
  return { file: `${label}-${n}.jpg`, absolutePath: `/photos/${label}-${n}.jpg`, label, source };
}

/** `count` photos of each (label, source) pair. */
function dataset(groups: [label: string, source: string, count: number][]): ManifestEntry[] {
  return groups.flatMap(([label, source, count]) =>
    Array.from({ length: count }, (_, n) => entry(label, source, n)),
  );
}

/** Features whose only block is `stats`, 12 numbers per photo. */
function withStats(rows: number[][]): CachedFeatures[] {
  return rows.map((row) => ({
    blocks: { stats: Float32Array.from(row) } as CachedFeatures['blocks'],
    detections: [],
  }));
}

void test('stratified folds deal every (label, source) group evenly, the same for the same seed', () => {
  const entries = dataset([
    ['kitchen', 'houses', 11],
    ['kitchen', 'places', 7],
    ['bedroom', 'places', 3],
  ]);
  const folds = stratifiedFolds(entries, 5, 42);
  assert.equal(folds.length, entries.length);
  for (const [label, source] of [
    ['kitchen', 'houses'],
    ['kitchen', 'places'],
    ['bedroom', 'places'],
  ]) {
    const counts = [0, 0, 0, 0, 0];
    entries.forEach((e, i) => {
      if (e.label === label && e.source === source) counts[folds[i]!]!++;
    });
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `${label}|${source}: ${counts.join()}`);
  }
  // The 21 photos fill the five folds 5, 4, 4, 4, 4: small groups do not all start in fold 0.
  const sizes = [0, 0, 0, 0, 0];
  for (const f of folds) sizes[f]!++;
  assert.deepEqual(
    sizes.sort((a, b) => b - a),
    [5, 4, 4, 4, 4],
  );
  assert.deepEqual(stratifiedFolds(entries, 5, 42), folds);
  assert.notDeepEqual(stratifiedFolds(entries, 5, 43), folds);
});

void test('the calibration split holds out its share of every group, never more than half of one', () => {
  const entries = dataset([
    ['kitchen', 'houses', 20],
    ['bedroom', 'places', 3],
    ['bathroom', 'places', 1],
  ]);
  const heldPerLabel = (fraction: number): Record<string, number> => {
    const { fit, calibration } = stratifiedSplit(entries, fraction, 7);
    assert.deepEqual(
      [...fit, ...calibration].sort((a, b) => a - b),
      entries.map((_, i) => i),
    );
    const held: Record<string, number> = {};
    for (const i of calibration) held[entries[i]!.label] = (held[entries[i]!.label] ?? 0) + 1;
    return held;
  };
  // Half of 3 would round to 2 and half of 1 to 1: never more than half a group is held out.
  assert.deepEqual(heldPerLabel(0.5), { kitchen: 10, bedroom: 1 });
  assert.deepEqual(heldPerLabel(0.15), { kitchen: 3 });
  assert.deepEqual(heldPerLabel(0), {});
});

void test('the report gives accuracy over all photos, per source and per label, with counts', () => {
  const entries = dataset([
    ['bedroom', 'places', 2],
    ['kitchen', 'places', 2],
    ['kitchen', 'houses', 4],
  ]);
  const labels = ['bedroom', 'kitchen'];
  // bedroom|places: 1 of 2 right; kitchen|places: 2 of 2; kitchen|houses: 3 of 4.
  const predicted = Int32Array.from([0, 1, 1, 1, 1, 1, 1, 0]);
  assert.equal(
    crossValidationReport(entries, labels, predicted),
    [
      'cross-validated accuracy (head alone): 75.0% (6/8)',
      '  houses: 75.0% (3/4); kitchen 75.0% (3/4)',
      '  places: 75.0% (3/4); bedroom 50.0% (1/2), kitchen 100.0% (2/2)',
    ].join('\n'),
  );
});

void test('a design standardises every row with the mean and scale of the fit rows only', () => {
  const entries = dataset([
    ['bedroom', 'places', 2],
    ['kitchen', 'places', 2],
  ]);
  // Power-normalised (signed square root) to 2, 10, 4 and 100 before standardising.
  const features = withStats([4, 100, 16, 10_000].map((v) => new Array<number>(12).fill(v)));
  const design = buildDesign(entries, features, ['stats'], ['bedroom', 'kitchen'], [0, 2], [1, 3]);
  assert.deepEqual(design.mean, new Array<number>(12).fill(3));
  assert.deepEqual(design.scale, new Array<number>(12).fill(1));
  assert.deepEqual([...design.fit.x.data.slice(0, 12)], new Array<number>(12).fill(-1));
  assert.deepEqual([...design.calibration.x.data.slice(0, 12)], new Array<number>(12).fill(7));
  assert.deepEqual([...design.calibration.x.data.slice(12)], new Array<number>(12).fill(97));
  assert.deepEqual([...design.fit.y], [0, 1]);
  assert.deepEqual([...design.calibration.y], [0, 1]);
});

void test('each photo is predicted by a head fitted without it', async () => {
  const random = seededRandom(7);
  const noise = (): number => random() * 2 - 1;
  const options = {
    blocks: ['stats'] as const,
    labels: ['bedroom', 'kitchen'],
    folds: 4,
    seed: 1,
    fitOptions: { l2: 0.001, epochs: 300, learningRate: 0.05 },
  };

  // Labels carried by the first feature: every held-out photo is predicted right.
  const separable = dataset([
    ['bedroom', 'places', 20],
    ['kitchen', 'places', 20],
  ]);
  const signal = withStats(
    separable.map((e) => [
      e.label === 'bedroom' ? -1 : 1,
      ...Array.from({ length: 11 }, () => 0.3 * noise()),
    ]),
  );
  const right = await crossValidate(separable, signal, options);
  assert.deepEqual(
    [...right],
    separable.map((e) => (e.label === 'bedroom' ? 0 : 1)),
  );

  // Labels unrelated to the features: a head that had seen the photo would recall most of them
  // (31 of 40 when each fit saw every photo), one that had not is near chance (19).
  const shuffled = separable.map((e, i) => ({ ...e, label: (i * 7) % 3 === 0 ? 'bedroom' : 'kitchen' }));
  const pure = withStats(separable.map(() => Array.from({ length: 12 }, noise)));
  const predicted = await crossValidate(shuffled, pure, options);
  const hits = shuffled.filter((e, i) => options.labels[predicted[i]!] === e.label).length;
  assert.ok(hits <= 25, `${hits} of 40 predicted right from noise`);
});
