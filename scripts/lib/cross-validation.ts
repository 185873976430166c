import type { FeatureBlock } from '../../src/analysis/model/model-features.ts';
import type { CachedFeatures } from './feature-cache.ts';
import type { ManifestEntry } from './manifest.ts';
import { fitSoftmaxRegression, type FitOptions, predictLogits } from './softmax-regression.ts';
import { argmax, buildDesign, stratifiedFolds } from './training-data.ts';

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
    fitOptions: Omit<FitOptions, 'classes'>;
    log?: (line: string) => void;
  },
): Promise<Int32Array> {
  const foldOf = stratifiedFolds(entries, options.folds, options.seed);
  const predicted = new Int32Array(entries.length);
  for (let k = 0; k < options.folds; k++) {
    const fitRows = entries.flatMap((_, i) => (foldOf[i] === k ? [] : [i]));
    const testRows = entries.flatMap((_, i) => (foldOf[i] === k ? [i] : []));
    // The held-out ("calibration") split of the design is this fold.
    const design = buildDesign(entries, features, options.blocks, options.labels, fitRows, testRows);
    const model = await fitSoftmaxRegression(design.fit.x, design.fit.y, design.fit.weights, {
      ...options.fitOptions,
      classes: options.labels.length,
    });
    predictLogits(model, design.calibration.x).forEach((logits, r) => {
      predicted[testRows[r]!] = argmax(logits);
    });
    options.log?.(`cross-validation: fold ${k + 1} of ${options.folds} fitted`);
  }
  return predicted;
}

/** Share of `rows` predicted right, as "NN.N% (right/all)". */
function formatAccuracy(rows: number[], isRight: (i: number) => boolean): string {
  const hits = rows.filter(isRight).length;
  return `${((100 * hits) / rows.length).toFixed(1)}% (${hits}/${rows.length})`;
}

/** Accuracy over all entries, then per source and per label within each source. */
export function crossValidationReport(
  entries: readonly ManifestEntry[],
  labels: readonly string[],
  predicted: Int32Array,
): string {
  const isRight = (i: number): boolean => labels[predicted[i]!] === entries[i]!.label;
  const all = entries.map((_, i) => i);
  const lines = [`cross-validated accuracy (head alone): ${formatAccuracy(all, isRight)}`];
  for (const source of [...new Set(entries.map((e) => e.source || 'unspecified'))].sort()) {
    const rows = all.filter((i) => (entries[i]!.source || 'unspecified') === source);
    const perLabel = labels
      .map((label) => [label, rows.filter((i) => entries[i]!.label === label)] as const)
      .filter(([, r]) => r.length > 0)
      .map(([label, r]) => `${label} ${formatAccuracy(r, isRight)}`);
    lines.push(`  ${source}: ${formatAccuracy(rows, isRight)}; ${perLabel.join(', ')}`);
  }
  return lines.join('\n');
}
