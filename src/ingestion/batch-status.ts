/** The states of a batch (spec §States), in the only order they can happen. */
export const BATCH_STATUS = {
  accepted: 'accepted',
  validating: 'validating',
  processing: 'processing',
  completed: 'completed',
  completedWithErrors: 'completed_with_errors',
  failed: 'failed',
} as const;

export type BatchStatus = (typeof BATCH_STATUS)[keyof typeof BATCH_STATUS];

export const BATCH_STATUSES = Object.values(BATCH_STATUS);

/** States a batch never leaves. */
export const TERMINAL_STATUSES: readonly BatchStatus[] = [
  BATCH_STATUS.completed,
  BATCH_STATUS.completedWithErrors,
  BATCH_STATUS.failed,
];

/** The terminal state that the counters of a settled batch imply (CONTRACT §5). */
export function terminalStatusFor(counts: { upserted: number; failed: number }): BatchStatus {
  if (counts.failed === 0) return BATCH_STATUS.completed;
  if (counts.upserted === 0) return BATCH_STATUS.failed;
  return BATCH_STATUS.completedWithErrors;
}

/** The status record of a batch, as the API returns it (spec: batch status record). */
export interface BatchRecord {
  batch_id: string;
  status: BatchStatus;
  received_count: number;
  created_at: string;
  validated_ok: number;
  validated_failed: number;
  upserted: number;
  failed: number;
  updated_at: string;
}
