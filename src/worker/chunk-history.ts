import type { Database, Queryable } from '../db/database.ts';
import { lockProducts } from '../catalog/catalog.repository.ts';
import { productValue } from '../catalog/catalog-diff.ts';
import { applyItem } from '../catalog/catalog-replay.ts';
import { findCatalogRows } from '../catalog/catalog-state.repository.ts';
import { insertHistory, type NewHistoryEntry } from '../catalog/history.repository.ts';
import type { BatchKey } from './batch-progress.repository.ts';
import type { ChunkItems } from './batch-items.ts';

/**
 * The product history of a chunk (CONTRACT §11.3), recorded in the transaction that writes the
 * chunk, before its upserts: the items' products are locked, the stored rows they name read, and
 * the items applied to them one by one with the merge that made the chunk's rows (`applyItem`),
 * each change becoming an entry. One statement reads, one records; nothing is read per item.
 *
 * Returns false, having recorded nothing, when an item uses a sku another product owns: the chunk
 * then takes the rare path that rejects that item (chunk-recovery.ts), and records again there.
 */
export async function recordChunkHistory(
  tx: Queryable,
  kind: Database['kind'],
  batch: BatchKey,
  items: ChunkItems,
): Promise<boolean> {
  if (items.length === 0) return true;
  const externalIds = [...new Set(items.map(({ item }) => item.external_id))];
  const skus = [...new Set(items.flatMap(({ item }) => item.variants.map(({ sku }) => sku)))];
  // Locked before they are read, so a delete cannot come between this read and the chunk's write.
  await lockProducts(tx, batch.tenantId, externalIds);
  const reader = { kind, query: <R>(text: string, params?: readonly unknown[]) => tx.query<R>(text, params) };
  const catalog = await findCatalogRows(reader, batch.tenantId, { externalIds, skus });
  const entries: NewHistoryEntry[] = [];
  const ordinals = new Map<string, number>();
  for (const { index, item } of items) {
    const applied = applyItem(catalog, index, item);
    if (!applied.ok) return false;
    if (applied.action === 'unchanged') continue;
    const ordinal = (ordinals.get(item.external_id) ?? 0) + 1;
    ordinals.set(item.external_id, ordinal);
    const diff =
      applied.action === 'create'
        ? [{ path: '', op: 'add' as const, to: productValue(applied.product, applied.variants) }]
        : applied.diff;
    entries.push({ external_id: item.external_id, ordinal, action: applied.action, item_index: index, diff });
  }
  await insertHistory(tx, { tenantId: batch.tenantId, batchId: batch.batchId }, entries);
  return true;
}
