import type { Items } from './batches.ts';

/**
 * The `Idempotency-Key` of a part of a batch a run sends (CONTRACT §10.2, §11.6): the run's id with
 * the part's first file position and size (a batch the service refused as a whole is sent again in
 * parts, each a request of its own). A run sends each key once, and again only to retry a request
 * whose answer was lost; `--resume` continues a run under its id, so the batches the interrupted run
 * stored are answered as replays instead of being stored twice. A new run has a new id, so it
 * applies the file again. At most 36 + 30 visible ASCII characters.
 */
export const partKey = (runId: string, part: Items): string =>
  `ingest-${runId}-${part.positions[0] ?? 0}-${part.positions.length}`;
