import type { BatchStatus } from '../ingestion/batch-status.ts';

/**
 * What a finished run of a batch did, for metrics and logs: its status (null when the run ended
 * without settling it), items upserted and failed.
 */
export interface BatchOutcome {
  status: BatchStatus | null;
  upserted: number;
  failed: number;
}
