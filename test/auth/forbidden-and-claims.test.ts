import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { JWTPayload } from 'jose';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';
import { startTestServices, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { assertProblem } from '../helpers/assertions.ts';
import {
  anyCtx,
  assertUnauthorized,
  bearer,
  ENDPOINTS,
  sign,
  tenantWithData,
} from '../helpers/auth-fixtures.ts';

/** 403 for a missing tenant or scope (docs/reference.md §3), and the claims a deployment may configure. */

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'catalog-api';

let svc: TestService;
/** Checks `iss` and `aud`, names the tenant in `org`, and requires `exp` (AUTH_REQUIRE_EXP). */
let svcClaims: TestService;

before(async () => {
  [svc, svcClaims] = await startTestServices([
    {},
    {
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
      AUTH_TENANT_CLAIM: 'org',
      AUTH_REQUIRE_EXP: 'true',
    },
  ]);
});

after(async () => {
  await Promise.all([svc?.stop(), svcClaims?.stop()]);
});

void describe('403 forbidden: tenant claim and scopes', () => {
  for (const endpoint of ENDPOINTS) {
    void test(`${endpoint.name}: a token without a (non-empty string) tenant is 403`, async () => {
      const key = new TextEncoder().encode(svc.secret);
      // U+0000 cannot be stored in PostgreSQL text, so no tenant has it in its id.
      const claimsList = [
        {},
        { tenant_id: '' },
        { tenant_id: ' ' },
        { tenant_id: '\t\n\u3000' },
        { tenant_id: 42 },
        { tenant_id: null },
        { tenant: 'x' },
        { tenant_id: 'acme\u0000' },
        // Stored as U+FFFD, a lone surrogate would make "acme\ud800" and "acme\ufffd" one tenant.
        { tenant_id: 'acme\ud800' },
        // Longer than a key: an index row would exceed PostgreSQL's 2704 bytes.
        { tenant_id: 't'.repeat(256) },
        { tenant_id: Array.from({ length: 4000 }, (_, i) => (i * 7919).toString(36).at(-1)).join('') },
      ];
      for (const claims of claimsList) {
        const token = await sign(key, { scope: ALL_SCOPES, ...claims });
        const res = await endpoint.call(svc, anyCtx, bearer(token));
        assertProblem(res, { slug: 'forbidden', instance: endpoint.path(anyCtx) });
      }
    });

    void test(`${endpoint.name}: needs ${endpoint.scope}, as a scope string or an scp array`, async () => {
      const { tenant, ctx } = await tenantWithData(svc);
      const others = ALL_SCOPES.split(' ').filter((s) => s !== endpoint.scope);
      const lacking = [
        { scope: others.join(' ') },
        { scp: others },
        { scope: '' },
        { scope: `${endpoint.scope}x` },
        { scope: endpoint.scope.toUpperCase() },
        {},
      ];
      for (const claims of lacking) {
        const token = await sign(new TextEncoder().encode(svc.secret), {
          tenant_id: tenant,
          scope: '',
          ...claims,
        });
        const res = await endpoint.call(svc, ctx, bearer(token));
        assertProblem(res, { slug: 'forbidden', instance: endpoint.path(ctx) });
      }
      const holding = [
        { scope: endpoint.scope },
        { scope: `openid ${endpoint.scope} profile` },
        { scp: [endpoint.scope] },
        { scp: ['other', endpoint.scope] },
      ];
      for (const claims of holding) {
        const token = await sign(new TextEncoder().encode(svc.secret), {
          tenant_id: tenant,
          scope: '',
          ...claims,
        });
        const res = await endpoint.call(svc, ctx, bearer(token));
        assert.equal(res.statusCode, endpoint.ok, `${JSON.stringify(claims)}: ${res.body}`);
      }
    });
  }
});

void describe('issuer, audience, AUTH_TENANT_CLAIM and AUTH_REQUIRE_EXP', () => {
  const key = () => new TextEncoder().encode(svcClaims.secret);
  const claimsFor = (org: string, extra: JWTPayload = {}): JWTPayload => ({
    org,
    scope: ALL_SCOPES,
    iss: ISSUER,
    aud: AUDIENCE,
    ...extra,
  });

  void test('the configured iss and aud are required and must match', async () => {
    const org = svcClaims.tenant('org');
    const list = async (token: string) =>
      svcClaims.request({ method: 'GET', url: '/products/ingestions', headers: bearer(token) });
    assert.equal((await list(await sign(key(), claimsFor(org)))).statusCode, 200);
    assert.equal(
      (await list(await sign(key(), claimsFor(org, { aud: ['other', AUDIENCE] })))).statusCode,
      200,
    );
    const wrong: JWTPayload[] = [
      claimsFor(org, { iss: 'https://evil.test/' }),
      claimsFor(org, { iss: undefined }),
      claimsFor(org, { aud: 'other-api' }),
      claimsFor(org, { aud: undefined }),
    ];
    for (const claims of wrong) {
      assertUnauthorized(await list(await sign(key(), claims)), '/products/ingestions', true);
    }
  });

  void test('AUTH_REQUIRE_EXP=true: a token without exp is 401, saying the claim is required', async () => {
    const org = svcClaims.tenant('org');
    const res = await svcClaims.request({
      method: 'GET',
      url: '/products',
      headers: bearer(await sign(key(), claimsFor(org, { exp: undefined }))),
    });
    assertUnauthorized(res, '/products', true);
    assert.equal(
      res.json<{ detail: string }>().detail,
      'The bearer token has no "exp" claim, which is required.',
    );
    const withExp = await sign(key(), claimsFor(org));
    const ok = await svcClaims.request({ method: 'GET', url: '/products', headers: bearer(withExp) });
    assert.equal(ok.statusCode, 200, ok.body);
  });

  void test('the tenant comes from `org`; tenant_id is then just another claim', async () => {
    const orgA = svcClaims.tenant('org-a');
    const orgB = svcClaims.tenant('org-b');
    const onlyTenantId = await sign(key(), { ...claimsFor(orgA), org: undefined, tenant_id: orgA });
    assertProblem(
      await svcClaims.request({ method: 'GET', url: '/products/ingestions', headers: bearer(onlyTenantId) }),
      { slug: 'forbidden', instance: '/products/ingestions' },
    );

    const asA = await sign(key(), claimsFor(orgA, { tenant_id: orgB }));
    const submitted = await svcClaims.request({
      method: 'POST',
      url: '/products/ingestions',
      json: { items: [product()] },
      headers: bearer(asA),
    });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const batchId = submitted.json<{ batch_id: string }>().batch_id;
    const url = `/products/ingestions/${batchId}`;
    const readA = await sign(key(), claimsFor(orgA));
    assert.equal((await svcClaims.request({ method: 'GET', url, headers: bearer(readA) })).statusCode, 200);
    const readB = await sign(key(), claimsFor(orgB, { tenant_id: orgA }));
    assertProblem(await svcClaims.request({ method: 'GET', url, headers: bearer(readB) }), {
      slug: 'not-found',
      instance: url,
    });
  });
});
