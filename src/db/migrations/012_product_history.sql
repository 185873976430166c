-- A product's history (docs/reference.md §11.3): one row per applied change, written in the transaction that
-- applies it. Keyed by the product, not by a product row: a deleted product keeps its entries and a
-- later create continues them. `n` numbers a product's entries from 1, newest highest; the writers
-- of one product hold its row lock (a chunk upserts it, a delete locks it), so they take numbers in
-- the order their changes apply. A number per product, not a global sequence, so a cursor tells a
-- tenant nothing about other tenants' traffic.
CREATE TABLE product_history (
  tenant_id   text COLLATE "C" NOT NULL,
  external_id text COLLATE "C" NOT NULL,
  n           bigint      NOT NULL,
  at          timestamptz NOT NULL,
  action      text        NOT NULL CHECK (action IN ('create', 'update', 'delete')),
  -- The batch and item that made the change; null for an API delete. No foreign key: entries
  -- outlive their batch (HISTORY_RETENTION_DAYS against BATCH_RETENTION_DAYS).
  batch_id    uuid,
  item_index  integer,
  label       text,
  diff        json        NOT NULL,
  PRIMARY KEY (tenant_id, external_id, n)
);

-- The retention sweep deletes the oldest entries first.
CREATE INDEX product_history_at ON product_history (at);
