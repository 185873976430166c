import { TERMINAL_STATUSES } from '../../src/ingestion/batch-status.ts';
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

/** The batch's progress bar, labelled by its id. */
export function batchProgress(batch: BatchStatus): HTMLElement {
  return progressBar(
    `Progress of batch ${batch.batch_id}`,
    itemsDone(batch),
    batch.received_count,
    isTerminal(batch),
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
