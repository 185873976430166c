-- Ended batches are deleted BATCH_RETENTION_DAYS after they end (their error records go with them,
-- ON DELETE CASCADE). `ended_at` is set once, by the statement that ends a batch, and indexed so the
-- worker's sweep finds the oldest however many batches are kept. A column of its own rather than an
-- index on `updated_at`: every chunk a worker writes touches `updated_at`, and an index on it would
-- keep those updates from being HOT (heap-only) updates.
ALTER TABLE batches ADD COLUMN IF NOT EXISTS ended_at timestamptz;

-- Batches that ended before: their last change was their end.
UPDATE batches SET ended_at = updated_at
WHERE status IN ('completed', 'completed_with_errors', 'failed') AND ended_at IS NULL;

CREATE INDEX IF NOT EXISTS batches_by_end ON batches (ended_at) WHERE ended_at IS NOT NULL;
