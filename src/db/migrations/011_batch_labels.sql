-- Batch labels (docs/reference.md §11.1): an optional name a client gives a batch (`?label=` on the
-- submission), shown in its status record, its list entry and its webhook payload. NULL: none.
-- COLLATE "C" compares byte by byte, which is code-point order in UTF-8: the list's prefix filter
-- (`label LIKE 'prefix%'`) is case-sensitive, and the planner turns such a prefix into a range scan
-- of this index only for a "C" column.
ALTER TABLE batches ADD COLUMN IF NOT EXISTS label text COLLATE "C";

-- GET /products/ingestions?label=PREFIX: the tenant's batches whose label starts with PREFIX.
-- Partial: most batches have no label, and those are never asked for by one.
CREATE INDEX IF NOT EXISTS batches_by_tenant_label ON batches (tenant_id, label)
  WHERE label IS NOT NULL;
