-- Webhook deliveries are kept as long as batches are (BATCH_RETENTION_DAYS, counted from a
-- delivery's creation); the worker's retention deletes ended ones past it, oldest first. Pending
-- deliveries are never deleted, so the index holds only ended ones, as the deletion asks for them.
CREATE INDEX IF NOT EXISTS webhook_deliveries_ended ON webhook_deliveries (created_at)
  WHERE status <> 'pending';
