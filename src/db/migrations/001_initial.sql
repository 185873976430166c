-- Batches, their items and per-item errors; the catalog of products and variants; rate-limit
-- windows. Every key starts with tenant_id: tenants share tables, never rows.

CREATE TABLE batches (
  tenant_id        text COLLATE "C"        NOT NULL,
  id               uuid        NOT NULL,
  -- Submission order within the service: batches of one tenant are applied in this order.
  seq              bigint      GENERATED ALWAYS AS IDENTITY,
  status           text        NOT NULL DEFAULT 'accepted'
    CHECK (status IN ('accepted', 'validating', 'processing', 'completed', 'completed_with_errors', 'failed')),
  received_count   integer     NOT NULL,
  validated_ok     integer     NOT NULL DEFAULT 0,
  validated_failed integer     NOT NULL DEFAULT 0,
  upserted         integer     NOT NULL DEFAULT 0,
  failed           integer     NOT NULL DEFAULT 0,
  -- Items with a lower index are settled (written or failed); a resumed worker starts here.
  next_index       integer     NOT NULL DEFAULT 0,
  -- Processing attempts; past the limit the batch is failed instead of blocking its tenant forever.
  attempts         integer     NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

CREATE INDEX batches_by_tenant ON batches (tenant_id, seq);
CREATE INDEX batches_unfinished ON batches (tenant_id, seq)
  WHERE status IN ('accepted', 'validating', 'processing');

CREATE TABLE batch_items (
  tenant_id text COLLATE "C" NOT NULL,
  batch_id  uuid    NOT NULL,
  idx       integer NOT NULL,
  payload   jsonb   NOT NULL,
  PRIMARY KEY (tenant_id, batch_id, idx),
  FOREIGN KEY (tenant_id, batch_id) REFERENCES batches (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE batch_item_errors (
  tenant_id   text COLLATE "C"    NOT NULL,
  batch_id    uuid    NOT NULL,
  idx         integer NOT NULL,
  external_id text,
  sku         text,
  errors      jsonb   NOT NULL,
  PRIMARY KEY (tenant_id, batch_id, idx),
  FOREIGN KEY (tenant_id, batch_id) REFERENCES batches (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE products (
  tenant_id   text COLLATE "C"        NOT NULL,
  external_id text COLLATE "C" NOT NULL,
  name        text        NOT NULL,
  description text        NOT NULL,
  style       text        NOT NULL,
  type        text        NOT NULL,
  sub_type    text        NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, external_id)
);

CREATE TABLE variants (
  tenant_id   text COLLATE "C"             NOT NULL,
  sku         text COLLATE "C" NOT NULL,
  external_id text COLLATE "C" NOT NULL,
  -- Creation order, so a product lists its variants in the order they first arrived.
  seq         bigint           GENERATED ALWAYS AS IDENTITY,
  name        text             NOT NULL,
  item_url    text             NOT NULL,
  depth       double precision NOT NULL,
  height      double precision NOT NULL,
  width       double precision NOT NULL,
  weight      double precision NOT NULL,
  color       text             NOT NULL,
  price       double precision NOT NULL,
  brand       text             NOT NULL,
  -- [{url, angle}] in merge order; at most a few dozen, always read and written whole.
  images      jsonb            NOT NULL DEFAULT '[]',
  created_at  timestamptz      NOT NULL,
  updated_at  timestamptz      NOT NULL,
  PRIMARY KEY (tenant_id, sku),
  FOREIGN KEY (tenant_id, external_id) REFERENCES products (tenant_id, external_id) ON DELETE CASCADE
);

CREATE INDEX variants_by_product ON variants (tenant_id, external_id, seq);

CREATE TABLE rate_limit_windows (
  tenant_id    text COLLATE "C"        NOT NULL,
  window_start timestamptz NOT NULL,
  hits         integer     NOT NULL,
  PRIMARY KEY (tenant_id, window_start)
);
