/** The API's `/readyz`: a submission needs the database and the job queue, so both are checked. */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService({ ROLE: 'api' });
});
after(() => svc.stop());

void test('an API whose database and queue answer is ready', async () => {
  const res = await svc.request({ method: 'GET', url: '/readyz' });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { status: 'ready', checks: { database: 'ok', queue: 'ok' } });
});

void test('an API whose queue is gone from the database is 503, naming the queue', async () => {
  const { db, queue } = svc.service;
  await db.query(`ALTER TABLE ${queue.schema}.queue RENAME TO queue_gone`);
  try {
    const res = await svc.request({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), { status: 'not_ready', checks: { database: 'ok', queue: 'failing' } });
  } finally {
    await db.query(`ALTER TABLE ${queue.schema}.queue_gone RENAME TO queue`);
  }
  assert.equal((await svc.request({ method: 'GET', url: '/readyz' })).statusCode, 200);
});

void test('an API whose job queue has stopped is 503, naming the queue', async () => {
  await svc.service.queue.stop(100);
  const res = await svc.request({ method: 'GET', url: '/readyz' });
  assert.equal(res.statusCode, 503);
  assert.deepEqual(res.json(), { status: 'not_ready', checks: { database: 'ok', queue: 'failing' } });
});
