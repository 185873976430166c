import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DeploymentError } from '../../src/db/deployment-check.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { pgBouncerMissing, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';

/**
 * The whole service (API, worker thread, queue) with DATABASE_URL pointing at a PgBouncer in
 * transaction pooling mode (docs/deployment.md, issue #54): a tenant's batches, each drained under
 * the tenant lock as the worker takes it, must all end, in submission order.
 */
void describe('batches through PgBouncer in transaction pooling mode', { skip: pgBouncerMissing() }, () => {
  let bouncer: PgBouncer;
  let svc: TestService;

  before(async () => {
    // Fewer server connections than the service's pools hold: consecutive statements of one client
    // go to different server connections, as they do under load in production.
    bouncer = await startPgBouncer({ poolSize: 6 });
    svc = await startTestService({ DATABASE_URL: bouncer.url });
  });
  after(async () => {
    await svc?.stop();
    await bouncer?.stop();
  });

  test("two batches of one tenant both complete, the second's values last", async () => {
    const token = await svc.token(svc.tenant());
    const shared = product({ name: 'First name' });
    const firstId = await svc.submit(token, [shared, product()]);
    const secondId = await svc.submit(token, [
      { ...shared, name: 'Second name' },
      product(),
      'not an object',
    ]);
    const first = await svc.waitForTerminal(token, firstId, 30_000);
    const second = await svc.waitForTerminal(token, secondId, 30_000);
    const counters = (record: Record<string, unknown>) => [
      record.status,
      record.received_count,
      record.validated_ok,
      record.validated_failed,
      record.upserted,
      record.failed,
    ];
    assert.deepEqual(counters(first), ['completed', 2, 2, 0, 2, 0]);
    assert.deepEqual(counters(second), ['completed_with_errors', 3, 2, 1, 2, 1]);
    const stored = await svc.request({
      method: 'GET',
      url: `/products/${String(shared.external_id)}`,
      token,
    });
    assert.equal(stored.statusCode, 200);
    assert.equal(stored.json<{ name: string }>().name, 'Second name');
  });

  test('a third batch after the others drained is taken up too (the lock was let go)', async () => {
    const token = await svc.token(svc.tenant());
    for (let round = 0; round < 3; round++) {
      const id = await svc.submit(token, [product()]);
      const record = await svc.waitForTerminal(token, id, 30_000);
      assert.deepEqual([record.status, record.upserted], ['completed', 1]);
    }
  });
});

void describe('a PgBouncer in statement pooling mode', { skip: pgBouncerMissing() }, () => {
  let bouncer: PgBouncer;
  before(async () => {
    bouncer = await startPgBouncer({ poolMode: 'statement' });
  });
  after(async () => {
    await bouncer?.stop();
  });

  test('fails the start with one line naming the mode to use', async () => {
    await assert.rejects(startTestService({ DATABASE_URL: bouncer.url }), (error: unknown) => {
      assert.ok(error instanceof DeploymentError);
      assert.match(
        error.message,
        /^DATABASE_URL leads to a PgBouncer in statement pooling mode; .*pool_mode = transaction/,
      );
      assert.equal(error.message.includes('\n'), false);
      return true;
    });
  });
});
