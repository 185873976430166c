import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../src/db/database.ts';
import { createBatchedStatusReads } from '../../src/ingestion/batched-status-reads.ts';
import type { BatchRow } from '../../src/ingestion/batches/batch.repository.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { assertProblem, counterValues } from '../helpers/assertions.ts';

/**
 * Status reads asked for in one turn of the event loop share one statement (src/ingestion/batched-status-reads.ts);
 * each still gets its own tenant's batch or nothing, and nothing is cached between turns.
 */

/** `db`, counting the statements sent through it. */
function counting(db: Queryable): { db: Queryable; statements: () => number } {
  let statements = 0;
  return {
    db: {
      query: (text, params) => {
        statements++;
        return db.query(text, params);
      },
      exec: (text) => db.exec(text),
    },
    statements: () => statements,
  };
}

void describe('status reads', () => {
  let svc: TestService;
  /** Tenant A's batch: two valid products. */
  const a = { tenant: '', token: '', batchId: '' };
  /** Tenant B's batch: one valid product and one without an external_id. */
  const b = { tenant: '', token: '', batchId: '' };

  before(async () => {
    svc = await startTestService();
    for (const [side, items] of [
      [a, [product(), product()]],
      [b, [product(), {}]],
    ] as const) {
      side.tenant = svc.tenant('reads');
      side.token = await svc.token(side.tenant);
      side.batchId = await svc.submit(side.token, [...items]);
      await svc.waitForTerminal(side.token, side.batchId);
    }
  });
  after(async () => {
    await svc?.stop();
  });

  void test('reads asked in one turn share one statement, and each gets its own tenant’s batch or null', async () => {
    const { db, statements } = counting(svc.service.db);
    const read = createBatchedStatusReads(db);
    const unknown = randomUUID();
    const found = await Promise.all([
      read(a.tenant, a.batchId),
      read(b.tenant, b.batchId),
      read(a.tenant, b.batchId),
      read(b.tenant, a.batchId),
      read(a.tenant, unknown),
      read(a.tenant, a.batchId.toUpperCase()),
      read(a.tenant, 'not-a-uuid'),
    ]);
    assert.equal(statements(), 1);
    assert.deepEqual(
      found.map((row) => row && [row.tenant_id, row.batch_id, row.status, ...counterValues({ ...row })]),
      [
        [a.tenant, a.batchId, 'completed', 2, 2, 0, 2, 0],
        [b.tenant, b.batchId, 'completed_with_errors', 2, 1, 1, 1, 1],
        null,
        null,
        null,
        [a.tenant, a.batchId, 'completed', 2, 2, 0, 2, 0],
        null,
      ],
    );
  });

  void test('an id that is not a UUID is null without a read, and fails none of its neighbours', async () => {
    const { db, statements } = counting(svc.service.db);
    const read = createBatchedStatusReads(db);
    assert.deepEqual(await Promise.all([read(a.tenant, 'x'), read(a.tenant, `${a.batchId}0`)]), [null, null]);
    assert.equal(statements(), 0);
  });

  void test('reads asked from separate callbacks of one turn, as requests are, share one statement', async () => {
    const { db, statements } = counting(svc.service.db);
    const read = createBatchedStatusReads(db);
    // Two immediates queued together run in one check phase, each a callback of its own (its
    // promises settled before the next), as the requests ready in one poll phase are: a dispatch
    // after each callback's promises would query twice. (Two timers, due in the same millisecond
    // only if the clock does not tick between them, split over two turns on a busy machine.)
    const found = await new Promise<Array<BatchRow | null>>((resolve, reject) => {
      const reads: Array<Promise<BatchRow | null>> = [];
      setImmediate(() => reads.push(read(a.tenant, a.batchId)));
      setImmediate(() => {
        reads.push(read(b.tenant, b.batchId));
        Promise.all(reads).then(resolve, reject);
      });
    });
    assert.equal(statements(), 1);
    assert.deepEqual(
      found.map((row) => row?.batch_id),
      [a.batchId, b.batchId],
    );
  });

  void test('at most 100 reads go in one statement', async () => {
    const { db, statements } = counting(svc.service.db);
    const read = createBatchedStatusReads(db);
    const found = await Promise.all(
      Array.from({ length: 250 }, (_, i) => read(a.tenant, i % 2 ? a.batchId : b.batchId)),
    );
    assert.equal(statements(), 3);
    assert.deepEqual(
      found.map((row) => row?.batch_id ?? null),
      Array.from({ length: 250 }, (_, i) => (i % 2 ? a.batchId : null)),
    );
  });

  void test('a read in a later turn queries again and sees what changed in between', async () => {
    const { db, statements } = counting(svc.service.db);
    const read = createBatchedStatusReads(db);
    const before = await read(a.tenant, a.batchId);
    await svc.service.db.query(
      `UPDATE batches SET updated_at = updated_at + interval '1 second' WHERE tenant_id = $1 AND id = $2`,
      [a.tenant, a.batchId],
    );
    const afterChange = await read(a.tenant, a.batchId);
    assert.equal(statements(), 2);
    assert.equal(Date.parse(afterChange!.updated_at) - Date.parse(before!.updated_at), 1000);
  });

  void test('a statement that fails fails every read it answers, and the next turn reads again', async () => {
    let failing = true;
    const read = createBatchedStatusReads({
      query: (text, params) =>
        failing ? Promise.reject(new Error('connection lost')) : svc.service.db.query(text, params),
      exec: (text) => svc.service.db.exec(text),
    });
    const results = await Promise.allSettled([read(a.tenant, a.batchId), read(b.tenant, b.batchId)]);
    assert.deepEqual(
      results.map((result) => (result.status === 'rejected' ? (result.reason as Error).message : 'read')),
      ['connection lost', 'connection lost'],
    );
    failing = false;
    assert.equal((await read(a.tenant, a.batchId))?.batch_id, a.batchId);
  });

  void test('many status requests at once: each tenant sees its own record, and another’s batch is 404', async () => {
    const url = (batchId: string) => `/products/ingestions/${batchId}`;
    const expected = new Map<string, unknown>();
    for (const side of [a, b]) {
      const res = await svc.request({ method: 'GET', url: url(side.batchId), token: side.token });
      assert.equal(res.statusCode, 200, res.body);
      expected.set(side.batchId, res.json());
    }
    const pairs: Array<{ who: typeof a; whose: typeof a }> = [
      { who: a, whose: a },
      { who: b, whose: b },
      { who: a, whose: b },
      { who: b, whose: a },
    ];
    const asks = Array.from({ length: 40 }, (_, i) => pairs[i % pairs.length]!);
    const answers = await Promise.all(
      asks.map(({ who, whose }) => svc.request({ method: 'GET', url: url(whose.batchId), token: who.token })),
    );
    answers.forEach((res, i) => {
      const { who, whose } = asks[i]!;
      if (who === whose) {
        assert.equal(res.statusCode, 200, res.body);
        assert.deepEqual(res.json(), expected.get(whose.batchId));
      } else {
        assertProblem(res, { slug: 'not-found', instance: url(whose.batchId) });
      }
    });
  });
});
