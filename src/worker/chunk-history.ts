import type { Database, Queryable } from '../db/database.ts';
import { productValue } from '../catalog/catalog-diff.ts';
import { applyItem } from '../catalog/catalog-replay.ts';
import { findCatalogRows, type CatalogKeys, type CatalogRows } from '../catalog/catalog-state.repository.ts';
import type { NewHistoryEntry } from '../catalog/history.repository.ts';
import type { ChunkItems } from './batch-items.ts';

/**
 * The product history of a chunk (docs/reference.md §11.3), made in the transaction that writes the chunk,
 * in two steps so that the work of this process and the server's overlap (chunk-writer.ts): the
 * stored rows the chunk will change are read first (`readChunkBase`), then, while the server runs
 * the products upsert, the items are applied to them one by one with the merge that made the
 * chunk's rows (`historyEntries`), each change becoming an entry. One statement locks, one reads,
 * one records; nothing is read per item.
 */

/**
 * The stored rows the chunk names, read once the chunk's transaction holds the row locks of its
 * stored products (`lockProducts`): from then on no other writer can change those products or their
 * variants (a delete takes its product's row first too), so the read's snapshot, taken after the
 * locks, holds the rows as the chunk's write will find them. `db` is that transaction, or a
 * connection beside it (`Database.reader`), which cannot see the transaction's own writes.
 */
export function readChunkBase(
  db: Queryable,
  kind: Database['kind'],
  tenantId: string,
  keys: CatalogKeys,
): Promise<CatalogRows> {
  if (keys.externalIds.length === 0) return Promise.resolve({ products: new Map(), variants: new Map() });
  const reader = { kind, query: <R>(text: string, params?: readonly unknown[]) => db.query<R>(text, params) };
  return findCatalogRows(reader, tenantId, keys);
}

/**
 * The entries of `items` applied in order on top of `base` (which it changes), none for an item
 * that changes nothing. Null when an item uses a sku another product owns: the chunk then takes the
 * rare path that rejects that item (chunk-recovery.ts), and records again there.
 */
export function historyEntries(base: CatalogRows, items: ChunkItems): NewHistoryEntry[] | null {
  const entries: NewHistoryEntry[] = [];
  const ordinals = new Map<string, number>();
  for (const { index, item } of items) {
    const applied = applyItem(base, index, item);
    if (!applied.ok) return null;
    if (applied.action === 'unchanged') continue;
    const ordinal = (ordinals.get(item.external_id) ?? 0) + 1;
    ordinals.set(item.external_id, ordinal);
    const diff =
      applied.action === 'create'
        ? [{ path: '', op: 'add' as const, to: productValue(applied.product, applied.variants) }]
        : applied.diff;
    entries.push({ external_id: item.external_id, ordinal, action: applied.action, item_index: index, diff });
  }
  return entries;
}
