import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database.ts';
import { insertBatch, insertBatchItems } from '../../src/ingestion/batch.repository.ts';

/** Stores a batch the way a submission does, but enqueues no job: the test drives it. */
export async function storeBatch(db: Database, tenantId: string, items: unknown[]): Promise<string> {
  const batchId = randomUUID();
  await db.transaction(async (tx) => {
    await insertBatch(tx, { tenantId, batchId, receivedCount: items.length });
    await insertBatchItems(tx, { tenantId, batchId, body: JSON.stringify({ items }) });
  });
  return batchId;
}
