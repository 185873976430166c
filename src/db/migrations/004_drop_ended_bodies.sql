-- A batch's body is read only while the batch runs, and the statement that ends a batch now
-- deletes its body. This deletes the bodies of batches that had ended before that.
DELETE FROM batch_payloads p
USING batches b
WHERE b.tenant_id = p.tenant_id
  AND b.id = p.batch_id
  AND b.status IN ('completed', 'completed_with_errors', 'failed');
