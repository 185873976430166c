-- Completion webhooks (docs/reference.md §10.1). An endpoint belongs to one tenant; its secret signs every
-- delivery. `previous_secret` still signs until `previous_secret_expires_at` (24 h after a rotation),
-- so a receiver can switch keys without losing deliveries. Secrets are kept as issued: an HMAC needs
-- the key itself, so they cannot be hashed like passwords.
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  tenant_id text NOT NULL,
  id uuid NOT NULL,
  url text NOT NULL,
  events text[] NOT NULL,
  description text,
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  enabled boolean NOT NULL DEFAULT true,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id)
);

-- The outbox: one row per (terminal batch, subscribed endpoint), inserted by the statement that ends
-- the batch, so a crash can delay a delivery but never lose it. `next_attempt_at` is when the next
-- attempt is due (null once delivered or failed); `attempt_started_at` marks an attempt in flight,
-- whose claim lapses after a while should its process die. `payload` is the body as first sent:
-- every later attempt sends the same bytes, even after the batch itself was deleted by retention.
-- `final_attempt` marks a redelivery: one attempt, then delivered or failed, no schedule.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  tenant_id text NOT NULL,
  id uuid NOT NULL,
  endpoint_id uuid NOT NULL,
  event text NOT NULL,
  batch_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'pending',
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error text,
  next_attempt_at timestamptz DEFAULT date_trunc('milliseconds', clock_timestamp()),
  attempt_started_at timestamptz,
  final_attempt boolean NOT NULL DEFAULT false,
  payload text,
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()),
  delivered_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE CASCADE
);

-- The dispatcher's sweep: pending deliveries by due time, whatever the tenant.
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending';
-- An endpoint's delivery log, newest first.
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint
  ON webhook_deliveries (tenant_id, endpoint_id, created_at, id);
