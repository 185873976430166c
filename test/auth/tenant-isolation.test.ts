import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertNothingStored, assertProblem, fieldCodes, ingestAndRead } from '../helpers/assertions.ts';
import { bearer, ENDPOINTS, tenantWithData } from '../helpers/auth-fixtures.ts';

/** The tenant comes from the token alone: nothing of one tenant is visible or writable to another. */

let svc: TestService;

before(async () => {
  svc = await startTestService();
});

after(async () => {
  await svc?.stop();
});

void describe('tenant isolation', () => {
  void test('tenant B sees nothing of tenant A, on every endpoint', async () => {
    const a = await tenantWithData(svc);
    const b = await svc.token(svc.tenant('b'));
    for (const endpoint of ENDPOINTS.filter((e) => e.name.includes('{'))) {
      const res = await endpoint.call(svc, a.ctx, bearer(b));
      assertProblem(res, { slug: 'not-found', instance: endpoint.path(a.ctx) });
      assert.equal((await endpoint.call(svc, a.ctx, bearer(a.token))).statusCode, 200);
    }
    await assertNothingStored(svc, b);
    // Nothing in a header or the query chooses the tenant.
    const withHeader = await svc.request({
      method: 'GET',
      url: '/products/ingestions',
      token: b,
      headers: { 'x-tenant-id': a.tenant, 'tenant-id': a.tenant },
    });
    assert.deepEqual(withHeader.json(), { data: [], next_cursor: null });
    const withQuery = await svc.request({ method: 'GET', url: `/products?tenant_id=${a.tenant}`, token: b });
    assert.equal(withQuery.statusCode, 400);
    assert.deepEqual(
      fieldCodes(withQuery.json<{ errors: unknown }>().errors).map((e) => e.field),
      ['tenant_id'],
    );
    // A's data is intact and A's lists show it.
    const own = await svc.request({ method: 'GET', url: '/products/ingestions', token: a.token });
    assert.deepEqual(
      own.json<{ data: Array<{ batch_id: string }> }>().data.map((x) => x.batch_id),
      [a.ctx.batchId],
    );
  });

  void test('the longest tenant id, 255 four-byte characters, stores keys as long as its own', async () => {
    const prefix = svc.tenant('long');
    const tenant = prefix + '\u{1d11e}'.repeat(255 - prefix.length);
    assert.equal([...tenant].length, 255);
    const token = await svc.token(tenant);
    const longest = '\u{1d11e}'.repeat(255);
    const item = product({ external_id: longest, variants: [variant({ sku: longest })] });
    const { final, errors } = await ingestAndRead(svc, token, [item]);
    assert.deepEqual([final.status, final.upserted, errors], ['completed', 1, []]);
    const res = await svc.request({ method: 'GET', url: `/products/${encodeURIComponent(longest)}`, token });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json<{ variants: Array<{ sku: string }> }>().variants[0]!.sku, longest);
  });

  void test('a tenant_id in an item does not change the tenant: it is an unknown_field', async () => {
    const a = await svc.token(svc.tenant('a'));
    const victim = svc.tenant('victim');
    const item = product({ tenant_id: victim });
    const { final, errors } = await ingestAndRead(svc, a, [item]);
    assert.equal(final.status, 'failed');
    assert.deepEqual(
      errors.map((r) => [r.index, r.external_id, fieldCodes(r.errors)]),
      [[0, item.external_id, [{ field: 'tenant_id', code: 'unknown_field' }]]],
    );
    await assertNothingStored(svc, await svc.token(victim));
    const products = await svc.request({ method: 'GET', url: '/products', token: a });
    assert.deepEqual(products.json(), { data: [], next_cursor: null });
  });
});
