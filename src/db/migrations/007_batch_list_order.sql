-- The batch list (GET /products/ingestions) is ordered by submission time and batch id, newest
-- first, and its cursor carries the last batch's own created_at and id. It used to carry `seq`,
-- which numbers the batches of every tenant: two cursors of one tenant told how many batches the
-- others had submitted in between. The keyset scan needs this index; `batches_by_tenant` still
-- serves the worker's per-tenant submission order.
CREATE INDEX IF NOT EXISTS batches_by_tenant_created ON batches (tenant_id, created_at, id);
--
-- Built in the migration's transaction, so not CONCURRENTLY: submissions wait while it builds:
-- 0.7 s for a million batches on a PostgreSQL 15.20 server of the bench machine. BATCH_RETENTION_DAYS
-- bounds how many there are.
