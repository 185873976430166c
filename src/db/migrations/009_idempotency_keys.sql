-- Idempotency-Key of submissions (docs/reference.md §10.2): per tenant, the SHA-256 of the first request's body
-- and the first answer's body, written in the transaction that stores the batch, so a key is taken
-- exactly when its batch exists. The primary key settles two requests with the same key at once: the
-- second insert waits for the first transaction and then finds its row.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  tenant_id   text COLLATE "C" NOT NULL,
  key         text COLLATE "C" NOT NULL,
  body_sha256 bytea            NOT NULL,
  response    jsonb            NOT NULL,
  created_at  timestamptz      NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, key)
);

-- The worker's sweep deletes keys past their 24 hours, oldest first.
CREATE INDEX IF NOT EXISTS idempotency_keys_by_age ON idempotency_keys (created_at);
