import type { Items } from './batches.ts';

/**
 * The `Idempotency-Key` of a part of a batch an import sends (docs/api-conventions.md#submitting-a-batch),
 * from the command line and the dashboard alike: the run's id with the part's first file position and
 * size (a batch the service refused as a whole is sent again in parts, each a request of its own, so
 * a key by batch number could not name a half). A run sends each key once, and again only to retry a
 * request whose answer was lost; the client's `--resume` and the dashboard's "Resume the submission"
 * continue a run under its id, so the batches it stored are answered as replays instead of being
 * stored twice (docs/cli.md, "Runs, `--resume` and labels"). A new run has a new id, so it applies the
 * file again. At most 36 + 30 visible ASCII characters.
 */
export const partKey = (runId: string, part: Items): string =>
  `ingest-${runId}-${part.positions[0] ?? 0}-${part.positions.length}`;
