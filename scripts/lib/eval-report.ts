import path from 'node:path';

import type { RoomType, SceneKind } from '../../src/analysis/scene-types.ts';

/** What the analyzer said about one labelled photo. */
export interface Outcome {
  file: string;
  label: string;
  predicted: RoomType;
  confidence: number;
  correct: boolean;
  scene: SceneKind;
  sceneCorrect: boolean;
  /** Whether the model called the room furnished (absent when it failed). */
  furnished?: boolean;
  /** The manifest's `empty_room` when it says yes or no. */
  emptyRoom?: boolean;
  error?: string;
}

const pct = (right: number, n: number): string => (n ? `${((100 * right) / n).toFixed(1)}%` : '-');

/** Prints the confusion table, per-label recall, scene-kind and per-source accuracy. */
export function printConfusion(outcomes: readonly Outcome[], options: { verbose: boolean }): void {
  const labels = [...new Set(outcomes.map((o) => o.label))].sort();
  const predicted = [...new Set(outcomes.map((o) => o.predicted))].sort();
  const width = Math.max(12, ...labels.map((l) => l.length + 1));
  const colWidth = Math.max(...predicted.map((p) => p.length), 5) + 1;
  console.log('confusion (rows: label, columns: predicted room type)');
  console.log(''.padEnd(width) + predicted.map((p) => p.padStart(colWidth)).join(''));
  for (const label of labels) {
    const row = predicted.map((p) => outcomes.filter((o) => o.label === label && o.predicted === p).length);
    console.log(label.padEnd(width) + row.map((n) => (n ? String(n) : '.').padStart(colWidth)).join(''));
  }
  console.log('\nrecall per label');
  for (const label of labels) {
    const rows = outcomes.filter((o) => o.label === label);
    const right = rows.filter((o) => o.correct).length;
    console.log(`  ${label.padEnd(width)} ${pct(right, rows.length).padStart(7)}  (${right}/${rows.length})`);
  }
  console.log('\nscene kind (interior / exterior / floor plan)');
  for (const scene of ['interior', 'exterior', 'floor_plan'] as const) {
    const rows = outcomes.filter((o) =>
      scene === 'interior' ? !['exterior', 'floor_plan', 'other'].includes(o.label) : o.label === scene,
    );
    const right = rows.filter((o) => o.sceneCorrect).length;
    console.log(`  ${scene.padEnd(width)} ${pct(right, rows.length).padStart(7)}  (${right}/${rows.length})`);
  }
  const sceneRight = outcomes.filter((o) => o.sceneCorrect).length;
  console.log(
    `  ${'all'.padEnd(width)} ${pct(sceneRight, outcomes.length).padStart(7)}  (${sceneRight}/${outcomes.length})`,
  );
  console.log('\nroom type accuracy per source (file-name prefix)');
  const prefixes = [...new Set(outcomes.map((o) => path.basename(o.file).split('_')[0]!))].sort();
  for (const prefix of prefixes) {
    const rows = outcomes.filter((o) => path.basename(o.file).startsWith(`${prefix}_`));
    const right = rows.filter((o) => o.correct).length;
    console.log(
      `  ${`${prefix}_*`.padEnd(width)} ${pct(right, rows.length).padStart(7)}  (${right}/${rows.length})`,
    );
  }
  const unknown = outcomes.filter((o) => o.predicted === 'unknown').length;
  const failed = outcomes.filter((o) => o.error !== undefined);
  console.log(`\nunknown: ${unknown}, failed to analyse: ${failed.length}`);
  for (const o of failed) console.log(`  ${o.file}: ${o.error}`);
  if (options.verbose) {
    console.log('\nwrong:');
    for (const o of outcomes.filter((x) => !x.correct)) {
      console.log(`  ${o.file}: ${o.label} → ${o.predicted} (${o.confidence.toFixed(2)}, scene ${o.scene})`);
    }
  }
  console.log('');
}

/**
 * The empty-room lines: of the photos the manifest marks `empty_room=yes`, how many got a room type
 * (not `unknown`) and how many of those were right; and of the photos marked yes or no, how often the
 * furnished flag agreed. Nothing is printed for a manifest without the column.
 */
export function emptyRoomLines(outcomes: readonly Outcome[]): string[] {
  const percent = (right: number, n: number): string => `${n ? ((100 * right) / n).toFixed(1) : '0.0'}%`;
  const marked = outcomes.filter((o) => o.emptyRoom !== undefined);
  if (marked.length === 0) return [];
  const empty = marked.filter((o) => o.emptyRoom === true);
  const answered = empty.filter((o) => o.predicted !== 'unknown');
  const right = answered.filter((o) => o.correct).length;
  const flagRight = marked.filter((o) => o.furnished === !o.emptyRoom).length;
  return [
    `empty-room room type: answered ${answered.length}/${empty.length}, right ${right}/${answered.length} (${percent(right, answered.length)})`,
    `furnished flag: right ${flagRight}/${marked.length} (${percent(flagRight, marked.length)})`,
  ];
}
