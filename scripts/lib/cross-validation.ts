import type { FeatureBlock } from '../../src/analysis/model/model-features.ts';
import type { CachedFeatures } from './feature-cache.ts';
import type { ManifestEntry } from './manifest.ts';
import { fitSoftmaxRegression, type FitOptions, predictLogits } from './softmax-regression.ts';
import { buildDesign, seededRandom } from './training-data.ts';

/**
 * Assigns every entry to one of `folds` folds: each (label, source) group is shuffled (seeded) and
 * dealt out in turn, so every fold holds the same share of every group, give or take one photo.
 */
export function stratifiedFolds(entries: readonly ManifestEntry[], folds: number, seed: number): Int32Array {
  const random = seededRandom(seed);
  const groups = new Map<string, number[]>();
  entries.forEach((e, i) => {
    const key = `${e.label}|${e.source}`;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  const fold = new Int32Array(entries.length);
  let dealt = 0; // carries over between groups, so small groups do not all start in fold 0
  for (const key of [...groups.keys()].sort()) {
    const idx = groups.get(key)!;
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [idx[i], idx[j]] = [idx[j]!, idx[i]!];
    }
    for (const row of idx) fold[row] = dealt++ % folds;
  }
  return fold;
}

/**
 * Out-of-fold predictions: for each fold, the head is fitted (normalisation included) on the other
 * folds only and predicts the photos of this one. Returns the predicted label index of every entry.
 */
export async function crossValidate(
  entries: readonly ManifestEntry[],
  features: readonly CachedFeatures[],
  options: {
    blocks: readonly FeatureBlock[];
    labels: readonly string[];
    folds: number;
    seed: number;
    fit: Omit<FitOptions, 'classes'>;
    log?: (line: string) => void;
  },
): Promise<Int32Array> {
  const fold = stratifiedFolds(entries, options.folds, options.seed);
  const predicted = new Int32Array(entries.length);
  for (let k = 0; k < options.folds; k++) {
    const fit = entries.flatMap((_, i) => (fold[i] === k ? [] : [i]));
    const test = entries.flatMap((_, i) => (fold[i] === k ? [i] : []));
    const design = buildDesign(entries, features, options.blocks, options.labels, fit, test);
    const model = await fitSoftmaxRegression(design.fit.x, design.fit.y, design.fit.weights, {
      ...options.fit,
      classes: options.labels.length,
    });
    predictLogits(model, design.calibration.x).forEach((logits, r) => {
      predicted[test[r]!] = logits.indexOf(Math.max(...logits));
    });
    options.log?.(`cross-validation: fold ${k + 1} of ${options.folds} fitted`);
  }
  return predicted;
}

/** Percentage of `rows` whose prediction is their label, one decimal, and its count. */
function recall(rows: number[], right: (i: number) => boolean): string {
  const hits = rows.filter(right).length;
  return `${((100 * hits) / rows.length).toFixed(1)}% (${hits}/${rows.length})`;
}

/** Accuracy over all entries, then per source and per label within each source. */
export function crossValidationReport(
  entries: readonly ManifestEntry[],
  labels: readonly string[],
  predicted: Int32Array,
): string {
  const right = (i: number): boolean => labels[predicted[i]!] === entries[i]!.label;
  const all = entries.map((_, i) => i);
  const lines = [`cross-validated accuracy: ${recall(all, right)}`];
  for (const source of [...new Set(entries.map((e) => e.source || 'unspecified'))].sort()) {
    const rows = all.filter((i) => (entries[i]!.source || 'unspecified') === source);
    const perLabel = labels
      .map((label) => [label, rows.filter((i) => entries[i]!.label === label)] as const)
      .filter(([, r]) => r.length > 0)
      .map(([label, r]) => `${label} ${recall(r, right)}`);
    lines.push(`  ${source}: ${recall(rows, right)}; ${perLabel.join(', ')}`);
  }
  return lines.join('\n');
}
