import fs from 'node:fs/promises';
import { once } from 'node:events';
import { previewItems, type PreviewedItem } from '../import-pipeline/preview-items.ts';
import type { IngestionClient, PreviewAnswer, SkuWarningText } from './ingestion-client.ts';
import { readItems, type FileFormat } from './json-stream.ts';
import type { FieldError } from '../import-pipeline/problem-answer.ts';
import { diffText, type DiffElementText } from './diff-text.ts';

type Action = PreviewAnswer['data'][number]['action'];

/** One line of the dry run's file: an item, where it is in the input, and what sending it would do. */
export interface PreviewLine {
  position: number;
  /** The input line, for an item that would not be sent because it is not JSON. */
  line?: number;
  external_id: string | null;
  action: Action;
  changes: string[];
  /** The values of `changes`, one per path (docs/reference.md §11.2). */
  diff: DiffElementText[];
  /** `diff` as a person reads it: `variants[0].price: 265 → 250`, `variants[1]: added`. */
  shown: string[];
  errors: FieldError[];
  /** An added variant whose sku equals a stored one once leading zeros are dropped; the item is still valid. */
  warnings?: SkuWarningText[];
}

/** A dry run (`--dry-run`): which file, where the per-item lines go, and how to ask. */
export interface PreviewRun {
  file: string;
  format: FileFormat;
  /** `--encoding`: the file's text encoding when it is neither UTF-8 nor UTF-16 with a byte order mark. */
  encoding?: string;
  previewPath: string;
  batchSize: number;
  client: IngestionClient;
}

/** What a dry run found: the items read, how many of each action, and the warnings to show. */
export interface PreviewOutcome {
  read: number;
  summary: Record<Action, number>;
  /** How many items would change something (create, update, invalid), and the first few as lines a person reads. */
  changes: { count: number; shown: string[] };
  /** How many warnings the items had, and the first few, as lines a person reads. */
  warnings: { count: number; shown: string[] };
  seconds: number;
}

/** Warnings and changed items printed by the dry run; the preview file has them all. */
const WARNINGS_SHOWN = 5;
const CHANGES_SHOWN = 10;
/** Paths of one item's change printed before "…". */
const PATHS_SHOWN = 3;

/** A changed item as the dry run prints it: which item, its action, and its first changes or first error. */
export function changeText(line: PreviewLine): string {
  const what =
    line.action === 'invalid'
      ? (line.errors[0]?.message ?? '')
      : line.shown.slice(0, PATHS_SHOWN).join('; ') + (line.shown.length > PATHS_SHOWN ? '; …' : '');
  const id = line.external_id === null ? '' : ` ${line.external_id}`;
  return `item ${line.position}${id}: ${line.action}${what === '' ? '' : `: ${what}`}`;
}

/** A warning as the dry run prints it: where it is (row and column of a spreadsheet, else the item) and what. */
export function warningText(
  position: number,
  warning: SkuWarningText & { row?: number; column?: string | null },
): string {
  const where =
    warning.row === undefined
      ? `item ${position}, ${warning.field}`
      : `row ${warning.row}, column "${warning.column ?? 'sku'}"`;
  return `${where}: ${warning.message}`;
}

/**
 * Asks the service what sending the file would do, batch by batch as a run would cut it, and writes
 * one line per item (in file order) to `previewPath`; nothing is stored. Each batch is compared with
 * the catalog as stored now: an item does not see items of earlier batches of the file, which a real
 * run would have applied by then.
 */
export async function previewFile(run: PreviewRun): Promise<PreviewOutcome> {
  const startedAt = performance.now();
  const summary: Record<Action, number> = { create: 0, update: 0, unchanged: 0, invalid: 0 };
  let read = 0;
  const warnings: PreviewOutcome['warnings'] = { count: 0, shown: [] };
  const changes: PreviewOutcome['changes'] = { count: 0, shown: [] };
  const out = await fs.open(run.previewPath, 'w');
  const stream = out.createWriteStream();
  const write = async (line: PreviewLine) => {
    summary[line.action] += 1;
    if (line.action !== 'unchanged' && changes.count++ < CHANGES_SHOWN) changes.shown.push(changeText(line));
    for (const warning of line.warnings ?? []) {
      if (warnings.count++ < WARNINGS_SHOWN) warnings.shown.push(warningText(line.position, warning));
    }
    if (!stream.write(`${JSON.stringify(line)}\n`)) await once(stream, 'drain');
  };

  try {
    const ask = (body: string) => run.client.preview(body);
    const items = readItems(run.file, run.format, { encoding: run.encoding });
    for await (const settled of previewItems(items, ask, { size: run.batchSize })) {
      for (const item of settled) await writeItem(item);
    }
  } finally {
    stream.end();
    await once(stream, 'close');
  }
  return { read, summary, changes, warnings, seconds: (performance.now() - startedAt) / 1000 };

  /** The line of one previewed item. */
  async function writeItem(item: PreviewedItem<PreviewAnswer['data'][number]>) {
    read++;
    switch (item.kind) {
      case 'unsent':
        await write({
          position: item.position,
          // The line of a line that is not JSON; a spreadsheet's errors name their rows.
          line: item.malformed ? item.line : undefined,
          external_id: item.externalId,
          action: 'invalid',
          changes: [],
          diff: [],
          shown: [],
          errors: item.errors,
        });
        break;
      case 'previewed': {
        const { external_id, action, changes, diff = [], errors, warnings } = item.entry;
        await write({
          position: item.position,
          external_id,
          action,
          changes,
          diff,
          shown: diff.map(diffText),
          errors,
          ...(warnings && { warnings }),
        });
        break;
      }
      case 'unpreviewed':
        break;
    }
  }
}
