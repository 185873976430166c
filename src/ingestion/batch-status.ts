/** The states of a batch (docs/reference.md §5), in the only order they can happen. */
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

/** States of a batch still to be worked on. */
export const UNFINISHED_STATUSES: readonly BatchStatus[] = BATCH_STATUSES.filter(
  (status) => !TERMINAL_STATUSES.includes(status),
);

/** Each status as a SQL literal (`'processing'`), for statements that name one. */
export const STATUS_SQL = Object.fromEntries(
  Object.entries(BATCH_STATUS).map(([name, status]) => [name, `'${status}'`]),
) as { readonly [K in keyof typeof BATCH_STATUS]: string };

const sqlList = (statuses: readonly BatchStatus[]) =>
  `(${statuses.map((status) => `'${status}'`).join(', ')})`;

/**
 * `status IN …` lists as SQL text. Written into the statement rather than bound as `= ANY($n)`: the
 * planner uses a partial index (`batches_unfinished`) only when it can see the query's condition
 * implies the index's, which it cannot for a parameter.
 */
export const UNFINISHED_SQL = sqlList(UNFINISHED_STATUSES);
export const TERMINAL_SQL = sqlList(TERMINAL_STATUSES);

/**
 * The terminal state that a settled batch's counters imply (docs/reference.md §5), as a SQL expression over
 * its row: `completed` when nothing failed, `failed` when nothing was written, else
 * `completed_with_errors`.
 */
export const SETTLED_STATUS_SQL = `CASE WHEN failed = 0 THEN ${STATUS_SQL.completed}
  WHEN upserted = 0 THEN ${STATUS_SQL.failed} ELSE ${STATUS_SQL.completedWithErrors} END`;
