import { BATCH_STATUS, TERMINAL_STATUSES } from '../../src/ingestion/batch-status.ts';
import type { BatchStatus } from './api-types.ts';
import { h, progressBar } from './dom.ts';

/** Whether a batch has reached a state it never leaves. */
export function isTerminal(batch: BatchStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(batch.status);
}

/** Items a batch has finished with (written or failed), out of `received_count`. */
export function itemsDone(batch: BatchStatus): number {
  return batch.upserted + batch.failed;
}

/**
 * Whether every item is settled (written or failed) while the batch is still `processing`. The
 * worker's last chunk usually ends its batch in the same commit; when that chunk took the rare path
 * (a sku another product owns, or a write its data made fail), or its run stopped right after it,
 * the terminal status (and its webhook deliveries) follows in a transaction of its own. The bar reads 100 % then, so the page says why the status
 * has not moved yet.
 */
export function isFinishing(batch: BatchStatus): boolean {
  return (
    batch.status === BATCH_STATUS.processing &&
    batch.received_count > 0 &&
    itemsDone(batch) >= batch.received_count
  );
}

/** What the page says beside a bar at 100 % whose batch is still `processing`. */
const FINISHING_TEXT = 'finishing — writing the last results';

/** The batch's progress bar, labelled by its id, with the words "finishing …" while it is finishing. */
export function batchProgress(batch: BatchStatus): HTMLElement {
  return h(
    'span',
    { class: 'batch-progress' },
    progressBar(
      `Progress of batch ${batch.batch_id}`,
      itemsDone(batch),
      batch.received_count,
      isTerminal(batch),
    ),
    isFinishing(batch) && h('span', { class: 'progress-note' }, FINISHING_TEXT),
  );
}

/** The status as a badge (its text is the status; the colour only repeats it). */
export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge status-${status}` }, status.replaceAll('_', ' '));
}

/** A fingerprint of what a poll can see change. */
export function batchFingerprint(batches: BatchStatus[]): string {
  return batches.map((batch) => `${batch.batch_id}:${batch.status}:${batch.updated_at}`).join('|');
}
