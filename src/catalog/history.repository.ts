import type { Queryable } from '../db/database.ts';
import { flatString } from '../runtime/flat-string.ts';
import { deletionInRuns, type RetentionDeletion } from '../db/deletion-in-runs.ts';
import { HIDDEN_TENANT } from '../db/hidden-tenant.ts';
import type { DiffElement } from './catalog-diff.ts';

/** SQL of the product history (docs/reference.md §11.3): the writes that record changes, the reads, the retention. */

/** What a change does to a product, as its history entry names it. */
export type HistoryAction = 'create' | 'update' | 'delete';

/**
 * An entry to record. `ordinal` numbers a chunk's entries of one product from 1 in the order they
 * apply: the statement adds it to the product's last stored number, so a later item's entry is
 * the newer one.
 */
export interface NewHistoryEntry {
  external_id: string;
  ordinal: number;
  action: HistoryAction;
  item_index: number | null;
  diff: DiffElement[];
}

/** An entry as the history route sends it (`label` only when there is one). */
export interface HistoryEntryRow {
  n: number;
  at: string;
  action: HistoryAction;
  batch_id: string | null;
  index: number | null;
  label: string | null;
  diff: DiffElement[];
}

/** The entry's number: one after the product's last, plus the entry's place among this statement's. */
const NEXT_N = (externalId: string) =>
  `COALESCE((SELECT max(h.n) FROM product_history h WHERE h.tenant_id = $1 AND h.external_id = ${externalId}), 0)`;

/**
 * Records the entries of one chunk (or of one API delete) with one statement. The caller holds the
 * row lock of each product named (a chunk's upsert, a delete's own), so no other writer takes the
 * same numbers. `at` is the transaction's time, the `updated_at` a chunk writes on the products
 * its entries name (`touchProducts`).
 */
export async function insertHistory(
  tx: Queryable,
  source: { tenantId: string; batchId: string | null },
  entries: readonly NewHistoryEntry[],
): Promise<void> {
  await insertSerializedHistory(tx, source, serializeEntries(entries));
}

/**
 * Entries in the form the insert takes: their short columns as arrays, and their diffs' JSON texts
 * joined by U+001E, which the statement splits apart. A chunk's diffs are as large as its rows
 * (2 MB for an update of every field of 1000 products); as one JSON array of entries PostgreSQL
 * parsed all of it (json_to_recordset), half of the insert's time, and as a `json[]` array literal
 * it took three times as long (docs/performance.md, history). `JSON.stringify` writes a control
 * character inside a string as an escape (`\u001e`), so the separator cannot occur in a diff.
 */
export interface SerializedEntries {
  readonly count: number;
  readonly externalIds: readonly string[];
  readonly ordinals: readonly number[];
  readonly actions: readonly HistoryAction[];
  readonly itemIndices: ReadonlyArray<number | null>;
  readonly diffs: string;
}

/** What separates the diffs in `SerializedEntries.diffs` (ASCII's record separator). */
const DIFF_SEPARATOR = '\u001e';

/** Serializes entries for `insertSerializedHistory`. */
export function serializeEntries(entries: readonly NewHistoryEntry[]): SerializedEntries {
  const diffs = flatString(entries.map((entry) => JSON.stringify(entry.diff)).join(DIFF_SEPARATOR));
  return {
    count: entries.length,
    externalIds: entries.map((entry) => entry.external_id),
    ordinals: entries.map((entry) => entry.ordinal),
    actions: entries.map((entry) => entry.action),
    itemIndices: entries.map((entry) => entry.item_index),
    diffs,
  };
}

/**
 * `insertHistory` of entries already serialized: a chunk serializes its entries as soon as they are
 * made, so their objects need not live on while its other statements run.
 */
export async function insertSerializedHistory(
  tx: Queryable,
  source: { tenantId: string; batchId: string | null },
  entries: SerializedEntries,
): Promise<void> {
  if (entries.count === 0) return;
  // The label is the batch's own (null for an API delete, or a batch without one), read here so
  // that the batch row stays its one source, by its primary key (HIDDEN_TENANT). `::json` checks
  // each diff, for the json column.
  await tx.query(
    `INSERT INTO product_history (tenant_id, external_id, n, at, action, batch_id, item_index, label, diff)
     SELECT $1, x.external_id, ${NEXT_N('x.external_id')} + x.ordinal, date_trunc('milliseconds', now()),
            x.action, $2, x.item_index,
            (SELECT b.label FROM batches b WHERE b.tenant_id = ${HIDDEN_TENANT} AND b.id = $2::uuid), x.diff::json
     FROM unnest($3::text[], $4::int[], $5::text[], $6::int[], string_to_array($7, chr(30)))
       AS x(external_id, ordinal, action, item_index, diff)`,
    [
      source.tenantId,
      source.batchId,
      entries.externalIds,
      entries.ordinals,
      entries.actions,
      entries.itemIndices,
      entries.diffs,
    ],
  );
}

/**
 * A page of a product's entries, newest first, those numbered below `beforeN` when it is given.
 * `diff` comes back as JSON text and is parsed here once (both drivers would parse jsonb anyway).
 */
export async function listHistory(
  db: Queryable,
  query: { tenantId: string; externalId: string; beforeN: number | null; limit: number },
): Promise<HistoryEntryRow[]> {
  return db.query<HistoryEntryRow>(
    `SELECT n::float8 AS n, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at, action,
            batch_id::text AS batch_id, item_index AS index, label, diff
     FROM product_history
     WHERE tenant_id = $1 AND external_id = $2 AND ($3::bigint IS NULL OR n < $3)
     ORDER BY n DESC LIMIT $4`,
    [query.tenantId, query.externalId, query.beforeN, query.limit],
  );
}

/** Whether the tenant stores the product now or has history of it (a deleted product keeps its history). */
export async function productIsKnown(db: Queryable, tenantId: string, externalId: string): Promise<boolean> {
  const rows = await db.query(
    `SELECT 1 WHERE EXISTS (SELECT 1 FROM products WHERE tenant_id = $1 AND external_id = $2)
        OR EXISTS (SELECT 1 FROM product_history WHERE tenant_id = $1 AND external_id = $2)`,
    [tenantId, externalId],
  );
  return rows.length === 1;
}

/** Entries deleted per statement. */
const ENTRIES_PER_STATEMENT = 5000;

/**
 * Deletes entries older than `retentionDays` (HISTORY_RETENTION_DAYS), oldest first, in runs of at
 * most 5000 (`deletionInRuns`); entries another process is deleting are skipped, not waited for.
 */
export const deleteExpiredHistory: RetentionDeletion = deletionInRuns(
  `DELETE FROM product_history WHERE (tenant_id, external_id, n) IN (
     SELECT tenant_id, external_id, n FROM product_history
     WHERE at < now() - make_interval(days => $1)
     ORDER BY at LIMIT $2
     FOR UPDATE SKIP LOCKED)
   RETURNING 1`,
  ENTRIES_PER_STATEMENT,
);
