import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

test('a mixed batch ends completed_with_errors with exact counters', async () => {
  const token = await svc.token(svc.tenant());
  const batchId = await svc.submit(token, [product(), 'not an object', product()]);
  const final = await svc.waitForTerminal(token, batchId);
  assert.equal(final.status, 'completed_with_errors');
  assert.deepEqual(
    [final.received_count, final.validated_ok, final.validated_failed, final.upserted, final.failed],
    [3, 2, 1, 2, 1],
  );
  const errors = await svc.allErrors(token, batchId);
  assert.deepEqual(errors, [
    {
      index: 1,
      errors: [{ field: '', code: 'invalid_type', message: 'The value must be an object.' }],
      external_id: null,
      sku: null,
    },
  ]);
});
