import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { LightMyRequestResponse } from 'fastify';
import {
  decodeJwt,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWTPayload,
} from 'jose';
import { ALL_SCOPES, startTestService, type TestService } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertNothingStored, assertProblem, fieldCodes, ingest } from '../helpers/api-assertions.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { loadVerificationKeys } from '../../src/auth/keys.ts';
import { createTokenVerifier } from '../../src/auth/verify-token.ts';
import { ForbiddenError, UnauthorizedError } from '../../src/http/errors.ts';

/** Bearer authentication, tenants and scopes (CONTRACT §3) on every protected endpoint. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'catalog-api';

/** What one endpoint needs: its scope, how to call it, and its success status. */
interface Endpoint {
  name: string;
  scope: string;
  ok: number;
  call(svc: TestService, ctx: Context, headers: Record<string, string>): Promise<LightMyRequestResponse>;
  /** The path, for the problem's `instance`. */
  path(ctx: Context): string;
}

/** Data a tenant owns, so that authorized calls can succeed. */
interface Context {
  batchId: string;
  externalId: string;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /products/ingestions',
    scope: 'ingestions:write',
    ok: 202,
    path: () => '/products/ingestions',
    call: (svc, _ctx, headers) =>
      svc.request({
        method: 'POST',
        url: '/products/ingestions',
        json: { items: [product()] },
        headers,
      }),
  },
  {
    name: 'GET /products/ingestions/{id}',
    scope: 'ingestions:read',
    ok: 200,
    path: (ctx) => `/products/ingestions/${ctx.batchId}`,
    call: (svc, ctx, headers) =>
      svc.request({ method: 'GET', url: `/products/ingestions/${ctx.batchId}`, headers }),
  },
  {
    name: 'GET /products/ingestions/{id}/errors',
    scope: 'ingestions:read',
    ok: 200,
    path: (ctx) => `/products/ingestions/${ctx.batchId}/errors`,
    call: (svc, ctx, headers) =>
      svc.request({ method: 'GET', url: `/products/ingestions/${ctx.batchId}/errors`, headers }),
  },
  {
    name: 'GET /products/ingestions',
    scope: 'ingestions:read',
    ok: 200,
    path: () => '/products/ingestions',
    call: (svc, _ctx, headers) => svc.request({ method: 'GET', url: '/products/ingestions', headers }),
  },
  {
    name: 'GET /products',
    scope: 'catalog:read',
    ok: 200,
    path: () => '/products',
    call: (svc, _ctx, headers) => svc.request({ method: 'GET', url: '/products', headers }),
  },
  {
    name: 'GET /products/{external_id}',
    scope: 'catalog:read',
    ok: 200,
    path: (ctx) => `/products/${ctx.externalId}`,
    call: (svc, ctx, headers) => svc.request({ method: 'GET', url: `/products/${ctx.externalId}`, headers }),
  },
];

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Signs a JWT; `claims` are the payload (no defaults but iat and a 1 h exp unless given). */
async function sign(
  key: Uint8Array | CryptoKey,
  claims: JWTPayload,
  header: { alg: string; kid?: string } = { alg: 'HS256' },
): Promise<string> {
  return new SignJWT({ iat: nowSeconds(), exp: nowSeconds() + 3600, ...claims })
    .setProtectedHeader({ typ: 'JWT', ...header })
    .sign(key);
}

/** An unsigned token (`alg: none`), which must never be accepted. */
function unsigned(claims: JWTPayload, alg = 'none'): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg, typ: 'JWT' })}.${part({ exp: nowSeconds() + 3600, ...claims })}.`;
}

/** Asserts a 401 problem with the contract's `WWW-Authenticate`. */
function assertUnauthorized(res: LightMyRequestResponse, instance: string, tokenSent: boolean): void {
  assertProblem(res, { slug: 'unauthorized', instance });
  assert.equal(res.headers['www-authenticate'], tokenSent ? 'Bearer error="invalid_token"' : 'Bearer');
}

let svc: TestService;
/** Checks `iss` and `aud`, names the tenant in `org`, and requires `exp` (AUTH_REQUIRE_EXP). */
let svcClaims: TestService;
/** Verifies RS256 with AUTH_JWT_PUBLIC_KEY only (no shared secret). */
let svcRsa: TestService;
/** Verifies with AUTH_JWKS_URL besides the shared secret. */
let svcJwks: TestService;
/** Development mode without any key: the secret is generated into DATA_DIR. */
let svcDev: TestService;

let rsa: { privateKey: CryptoKey; publicPem: string };
let es: { privateKey: CryptoKey; kid: string };
let jwksRsa: { privateKey: CryptoKey; kid: string };
let jwksServer: http.Server;
let devDataDir: string;

before(async () => {
  const rsaPair = await generateKeyPair('RS256', { extractable: true });
  rsa = { privateKey: rsaPair.privateKey, publicPem: await exportSPKI(rsaPair.publicKey) };
  const esPair = await generateKeyPair('ES256', { extractable: true });
  es = { privateKey: esPair.privateKey, kid: `es-${randomUUID()}` };
  const jwksRsaPair = await generateKeyPair('RS256', { extractable: true });
  jwksRsa = { privateKey: jwksRsaPair.privateKey, kid: `rs-${randomUUID()}` };
  const jwks = {
    keys: [
      { ...(await exportJWK(esPair.publicKey)), kid: es.kid, alg: 'ES256', use: 'sig' },
      { ...(await exportJWK(jwksRsaPair.publicKey)), kid: jwksRsa.kid, alg: 'RS256', use: 'sig' },
    ],
  };
  jwksServer = http.createServer((request, response) => {
    response.writeHead(request.url === '/.well-known/jwks.json' ? 200 : 404, {
      'content-type': 'application/json',
    });
    response.end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
  const { port } = jwksServer.address() as AddressInfo;
  devDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-dev-'));

  [svc, svcClaims, svcRsa, svcJwks, svcDev] = await Promise.all([
    startTestService(),
    startTestService({
      AUTH_JWT_ISSUER: ISSUER,
      AUTH_JWT_AUDIENCE: AUDIENCE,
      AUTH_TENANT_CLAIM: 'org',
      AUTH_REQUIRE_EXP: 'true',
    }),
    startTestService({ AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: rsa.publicPem }),
    startTestService({ AUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json` }),
    startTestService({ AUTH_JWT_SECRET: '', NODE_ENV: 'development', DATA_DIR: devDataDir }),
  ]);
});

after(async () => {
  await Promise.all([svc?.stop(), svcClaims?.stop(), svcRsa?.stop(), svcJwks?.stop(), svcDev?.stop()]);
  await new Promise((resolve) => jwksServer?.close(resolve));
  if (devDataDir) await fs.rm(devDataDir, { recursive: true, force: true });
});

/** A fresh tenant on `svc` with one batch (one valid, one invalid item) and one stored product. */
async function tenantWithData(): Promise<{ tenant: string; token: string; ctx: Context }> {
  const tenant = svc.tenant('auth');
  const token = await svc.token(tenant);
  const item = product();
  const { batchId, final } = await ingest(svc, token, [item, 'not an object']);
  assert.equal(final.status, 'completed_with_errors');
  return { tenant, token, ctx: { batchId, externalId: item.external_id as string } };
}

const anyCtx: Context = { batchId: randomUUID(), externalId: 'ext-unknown' };

void describe('401 unauthorized on every protected endpoint', () => {
  for (const endpoint of ENDPOINTS) {
    void test(`${endpoint.name}: no Authorization header → WWW-Authenticate: Bearer`, async () => {
      assertUnauthorized(await endpoint.call(svc, anyCtx, {}), endpoint.path(anyCtx), false);
    });

    void test(`${endpoint.name}: another scheme → 401`, async () => {
      const token = await svc.token(svc.tenant());
      for (const authorization of [
        `Basic ${Buffer.from('user:pass').toString('base64')}`,
        `Token ${token}`,
      ]) {
        assertUnauthorized(await endpoint.call(svc, anyCtx, { authorization }), endpoint.path(anyCtx), false);
      }
    });

    void test(`${endpoint.name}: an unusable token → WWW-Authenticate: Bearer error="invalid_token"`, async () => {
      const tenant = svc.tenant();
      const secret = new TextEncoder().encode(svc.secret);
      const valid = await svc.token(tenant);
      const [head, , signature] = valid.split('.');
      const forged = Buffer.from(JSON.stringify({ tenant_id: 'victim', scope: ALL_SCOPES })).toString(
        'base64url',
      );
      const tokens: Record<string, string> = {
        garbage: 'garbage',
        'three garbage parts': 'abc.def.ghi',
        expired: await sign(secret, { tenant_id: tenant, scope: ALL_SCOPES, exp: nowSeconds() - 120 }),
        'not yet valid': await sign(secret, {
          tenant_id: tenant,
          scope: ALL_SCOPES,
          nbf: nowSeconds() + 3600,
        }),
        'bad signature': await sign(randomBytes(32), { tenant_id: tenant, scope: ALL_SCOPES }),
        'tampered payload': `${head}.${forged}.${signature}`,
        'alg none': unsigned({ tenant_id: tenant, scope: ALL_SCOPES }),
        'alg NONE': unsigned({ tenant_id: tenant, scope: ALL_SCOPES }, 'NONE'),
        'alg none with a signature': `${unsigned({ tenant_id: tenant, scope: ALL_SCOPES })}${signature}`,
        'RS256 though only a secret is configured': await sign(
          rsa.privateKey,
          { tenant_id: tenant, scope: ALL_SCOPES },
          { alg: 'RS256' },
        ),
      };
      for (const [name, token] of Object.entries(tokens)) {
        const res = await endpoint.call(svc, anyCtx, bearer(token));
        assert.equal(res.statusCode, 401, `${name}: ${res.body}`);
        assertUnauthorized(res, endpoint.path(anyCtx), true);
      }
      // Something after the token is still a token sent, and not one that verifies.
      for (const authorization of [`Bearer ${valid} x`, 'Bearer a b']) {
        const res = await endpoint.call(svc, anyCtx, { authorization });
        assert.equal(res.statusCode, 401, `${authorization}: ${res.body}`);
        assertUnauthorized(res, endpoint.path(anyCtx), true);
      }
    });
  }

  void test('an empty bearer credential is 401', async () => {
    for (const authorization of ['Bearer', 'Bearer ', '']) {
      const res = await svc.request({ method: 'GET', url: '/products', headers: { authorization } });
      assertProblem(res, { slug: 'unauthorized', instance: '/products' });
      assert.match(String(res.headers['www-authenticate']), /^Bearer\b/);
    }
  });

  void test('credentials are checked before the body is read: no token and a bad body is 401', async () => {
    const res = await svc.request({
      method: 'POST',
      url: '/products/ingestions',
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    assertUnauthorized(res, '/products/ingestions', false);
  });
});

void describe('the scheme is case-insensitive', () => {
  void test('bearer and BEARER work like Bearer', async () => {
    const token = await svc.token(svc.tenant());
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      const res = await svc.request({
        method: 'GET',
        url: '/products/ingestions',
        headers: { authorization: `${scheme} ${token}` },
      });
      assert.equal(res.statusCode, 200, `${scheme}: ${res.body}`);
    }
  });
});

void describe('a token without exp', () => {
  void test('is accepted by default: CONTRACT §3 does not list a missing exp among the 401s', async () => {
    const key = new TextEncoder().encode(svc.secret);
    const token = await sign(key, { tenant_id: svc.tenant(), scope: ALL_SCOPES, exp: undefined });
    assert.equal(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp, undefined);
    const res = await svc.request({ method: 'GET', url: '/products', token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: [], next_cursor: null });
  });
});

void describe('403 forbidden: tenant claim and scopes', () => {
  for (const endpoint of ENDPOINTS) {
    void test(`${endpoint.name}: a token without a (non-empty string) tenant is 403`, async () => {
      const key = new TextEncoder().encode(svc.secret);
      // U+0000 cannot be stored in PostgreSQL text, so no tenant has it in its id.
      const claimsList = [
        {},
        { tenant_id: '' },
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
      const { tenant, ctx } = await tenantWithData();
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
        const token = await svc.token(tenant, { scope: '', claims });
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
        const token = await svc.token(tenant, { scope: '', claims });
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

void describe('asymmetric keys', () => {
  const claims = (tenant: string) => ({ tenant_id: tenant, scope: ALL_SCOPES });
  const list = (service: TestService, token: string) =>
    service.request({ method: 'GET', url: '/products/ingestions', headers: bearer(token) });

  void test('AUTH_JWT_PUBLIC_KEY: RS256 is accepted', async () => {
    const token = await sign(rsa.privateKey, claims(svcRsa.tenant()), { alg: 'RS256' });
    const res = await list(svcRsa, token);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: [], next_cursor: null });
  });

  void test('AUTH_JWT_PUBLIC_KEY: another key, HS256 signed with the public key text (alg confusion), or a secret is 401', async () => {
    const tenant = svcRsa.tenant();
    const stranger = await generateKeyPair('RS256');
    const tokens = [
      await sign(stranger.privateKey, claims(tenant), { alg: 'RS256' }),
      await sign(new TextEncoder().encode(rsa.publicPem), claims(tenant), { alg: 'HS256' }),
      await sign(new TextEncoder().encode(rsa.publicPem.trim()), claims(tenant), { alg: 'HS256' }),
      await sign(new TextEncoder().encode(svcRsa.secret), claims(tenant), { alg: 'HS256' }),
      unsigned(claims(tenant)),
    ];
    for (const token of tokens) assertUnauthorized(await list(svcRsa, token), '/products/ingestions', true);
  });

  void test('AUTH_JWKS_URL: ES256 and RS256 keys of the set are accepted, and the secret besides them', async () => {
    const esToken = await sign(es.privateKey, claims(svcJwks.tenant()), { alg: 'ES256', kid: es.kid });
    const esRes = await list(svcJwks, esToken);
    assert.equal(esRes.statusCode, 200, esRes.body);
    const rsToken = await sign(jwksRsa.privateKey, claims(svcJwks.tenant()), {
      alg: 'RS256',
      kid: jwksRsa.kid,
    });
    const rsRes = await list(svcJwks, rsToken);
    assert.equal(rsRes.statusCode, 200, rsRes.body);
    const hsRes = await list(svcJwks, await svcJwks.token(svcJwks.tenant()));
    assert.equal(hsRes.statusCode, 200, hsRes.body);
  });

  void test('AUTH_JWKS_URL: a key not in the set, an unknown kid, another secret or none is 401', async () => {
    const tenant = svcJwks.tenant();
    const stranger = await generateKeyPair('ES256');
    const tokens = [
      await sign(stranger.privateKey, claims(tenant), { alg: 'ES256', kid: es.kid }),
      await sign(es.privateKey, claims(tenant), { alg: 'ES256', kid: 'no-such-kid' }),
      await sign(randomBytes(32), claims(tenant), { alg: 'HS256' }),
      unsigned(claims(tenant)),
    ];
    for (const token of tokens) assertUnauthorized(await list(svcJwks, token), '/products/ingestions', true);
  });
});

void describe('tenant isolation', () => {
  void test('tenant B sees nothing of tenant A, on every endpoint', async () => {
    const a = await tenantWithData();
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
    const { final, errors } = await ingest(svc, token, [item]);
    assert.deepEqual([final.status, final.upserted, errors], ['completed', 1, []]);
    const res = await svc.request({ method: 'GET', url: `/products/${encodeURIComponent(longest)}`, token });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json<{ variants: Array<{ sku: string }> }>().variants[0]!.sku, longest);
  });

  void test('a tenant_id in an item does not change the tenant: it is an unknown_field', async () => {
    const a = await svc.token(svc.tenant('a'));
    const victim = svc.tenant('victim');
    const item = product({ tenant_id: victim });
    const { final, errors } = await ingest(svc, a, [item]);
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

void describe('verified tokens are remembered, not trusted past their exp', () => {
  const secret = randomBytes(32);
  const keys = { secret: new Uint8Array(secret), asymmetric: undefined };
  /** A verifier on a clock the test moves, starting on 2020-01-01. */
  const verifierAt = (start: number, cacheTtlMs?: number) => {
    const clock = { now: start };
    const check = createTokenVerifier({ keys, tenantClaim: 'tenant_id', now: () => clock.now, cacheTtlMs });
    return { clock, check };
  };
  const START = Date.UTC(2020, 0, 1);
  const tokenUntil = (expSeconds: number, scope = 'ingestions:read') =>
    new SignJWT({ tenant_id: 'acme', scope, exp: expSeconds })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(secret);
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => assert.fail('the token was accepted'),
      (error: unknown) => error,
    );

  for (const cacheTtlMs of [undefined, 0]) {
    void test(`a remembered token is refused once its exp passes (cache ${cacheTtlMs ?? 'default'})`, async () => {
      const { clock, check } = verifierAt(START, cacheTtlMs);
      const token = await tokenUntil(START / 1000 + 10);
      const header = `Bearer ${token}`;
      // Valid on the verifier's clock in 2020, although long expired on the real one.
      assert.deepEqual(await check(header, 'ingestions:read'), {
        tenantId: 'acme',
        scopes: new Set(['ingestions:read']),
      });
      clock.now += 9_999;
      assert.equal((await check(header, 'ingestions:read')).tenantId, 'acme');
      clock.now += 1;
      const error = await rejection(check(header, 'ingestions:read'));
      assert.ok(error instanceof UnauthorizedError);
      assert.equal(error.message, 'The bearer token has expired.');
    });
  }

  void test('a token without exp is valid (RFC 7519 makes it optional), unless requireExp is set', async () => {
    const token = await new SignJWT({ tenant_id: 'acme', scope: 'ingestions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(secret);
    const { clock, check } = verifierAt(START);
    const principal = { tenantId: 'acme', scopes: new Set(['ingestions:read']) };
    assert.deepEqual(await check(`Bearer ${token}`, 'ingestions:read'), principal);
    // Still valid when verified again, a year later.
    clock.now += 365 * 24 * 3600_000;
    assert.deepEqual(await check(`Bearer ${token}`, 'ingestions:read'), principal);

    const strict = createTokenVerifier({
      keys,
      tenantClaim: 'tenant_id',
      requireExp: true,
      now: () => START,
    });
    const error = await rejection(strict(`Bearer ${token}`, 'ingestions:read'));
    assert.ok(error instanceof UnauthorizedError);
    assert.equal(error.message, 'The bearer token has no "exp" claim, which is required.');
  });

  void test('a token without exp is remembered for the cache lifetime only, then verified again', async () => {
    // A key of its own, changed in place after the first check: only a fresh verification sees it.
    const ownSecret = new Uint8Array(randomBytes(32));
    const clock = { now: START };
    const check = createTokenVerifier({
      keys: { secret: ownSecret, asymmetric: undefined },
      tenantClaim: 'tenant_id',
      now: () => clock.now,
      cacheTtlMs: 60_000,
    });
    const header = `Bearer ${await new SignJWT({ tenant_id: 'acme', scope: 'ingestions:read' })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(ownSecret)}`;
    assert.equal((await check(header, 'ingestions:read')).tenantId, 'acme');
    ownSecret.fill(0);
    clock.now += 59_999;
    assert.equal((await check(header, 'ingestions:read')).tenantId, 'acme', 'remembered');
    clock.now += 1;
    const error = await rejection(check(header, 'ingestions:read'));
    assert.ok(error instanceof UnauthorizedError);
    assert.equal(error.message, 'The bearer token could not be verified.');
  });

  void test('a remembered token still needs the scope of each request', async () => {
    const { check } = verifierAt(START);
    const header = `Bearer ${await tokenUntil(START / 1000 + 3600)}`;
    assert.equal((await check(header, 'ingestions:read')).tenantId, 'acme');
    const error = await rejection(check(header, 'ingestions:write'));
    assert.ok(error instanceof ForbiddenError);
    assert.equal(error.message, 'The token lacks the scope "ingestions:write".');
  });

  void test('a refused token is not remembered: one refused before its nbf is admitted after it', async () => {
    const { clock, check } = verifierAt(START);
    const header = `Bearer ${await new SignJWT({
      tenant_id: 'acme',
      scope: 'ingestions:read',
      nbf: START / 1000 + 30,
      exp: START / 1000 + 3600,
    })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(secret)}`;
    const early = await rejection(check(header, 'ingestions:read'));
    assert.ok(early instanceof UnauthorizedError);
    assert.equal(early.message, 'The bearer token\'s "nbf" claim is not acceptable.');

    clock.now += 30_000;
    assert.deepEqual(await check(header, 'ingestions:read'), {
      tenantId: 'acme',
      scopes: new Set(['ingestions:read']),
    });
  });
});

void describe('keys and tokens from the command line', () => {
  const cli = (env: Record<string, string>, ...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/token.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env },
      timeout: 30_000,
    });

  void test('npm run token -- --tenant acme prints a token with every scope for 1 h that the service accepts', async () => {
    const { stdout } = await cli({ NODE_ENV: 'test', AUTH_JWT_SECRET: svc.secret }, '--tenant', 'acme');
    const token = stdout.trim();
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = decodeJwt(token);
    assert.equal(claims.tenant_id, 'acme');
    assert.deepEqual(String(claims.scope).split(' ').sort(), ALL_SCOPES.split(' ').sort());
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 3600);
    const submitted = await svc.request({
      method: 'POST',
      url: '/products/ingestions',
      json: { items: [product()] },
      headers: bearer(token),
    });
    assert.equal(submitted.statusCode, 202, submitted.body);
    const batchId = submitted.json<{ batch_id: string }>().batch_id;
    assert.equal((await svc.waitForTerminal(token, batchId)).status, 'completed');
    for (const endpoint of ENDPOINTS.filter((e) => e.name.startsWith('GET') && !e.name.includes('{'))) {
      assert.equal((await endpoint.call(svc, anyCtx, bearer(token))).statusCode, 200, endpoint.name);
    }
  });

  void test('in production without any key, loading keys and starting the service both refuse (ConfigError)', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-prod-'));
    try {
      const config = loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir });
      await assert.rejects(loadVerificationKeys(config), ConfigError);
      assert.deepEqual(await fs.readdir(dataDir), [], 'no secret is generated in production');
      const withSecret = loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir, AUTH_JWT_SECRET: 's3cret' });
      assert.deepEqual((await loadVerificationKeys(withSecret)).secret, new TextEncoder().encode('s3cret'));

      const { stdout } = await run(
        process.execPath,
        ['--import', 'tsx', 'test/helpers/api-start-service.ts'],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', DATA_DIR: dataDir },
          timeout: 60_000,
        },
      );
      const outcome = JSON.parse(stdout.trim()) as {
        started: boolean;
        configError: boolean;
        message: string;
      };
      assert.equal(outcome.started, false);
      assert.equal(outcome.configError, true, outcome.message);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  void test('in development without a key, a secret is generated once into DATA_DIR and reused', async () => {
    const secretFile = path.join(devDataDir, 'auth-jwt-secret');
    const secret = (await fs.readFile(secretFile, 'utf8')).trim();
    assert.match(secret, /^[0-9a-f]{64}$/);

    // The service started on it accepts a token signed with it, and one from `npm run token`.
    const direct = await sign(new TextEncoder().encode(secret), {
      tenant_id: svcDev.tenant(),
      scope: ALL_SCOPES,
    });
    const list = (token: string) =>
      svcDev.request({ method: 'GET', url: '/products/ingestions', headers: bearer(token) });
    assert.equal((await list(direct)).statusCode, 200);
    const { stdout } = await cli({ NODE_ENV: 'development', DATA_DIR: devDataDir }, '--tenant', 'acme');
    assert.equal((await list(stdout.trim())).statusCode, 200);

    // Loading the keys again reuses the file rather than generating another secret.
    const config = loadConfig({ NODE_ENV: 'development', DATA_DIR: devDataDir });
    assert.deepEqual((await loadVerificationKeys(config)).secret, new TextEncoder().encode(secret));
    assert.equal((await fs.readFile(secretFile, 'utf8')).trim(), secret);

    // Another DATA_DIR has its own secret, so its tokens are refused here.
    const otherDir = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-dev-other-'));
    try {
      const other = await cli({ NODE_ENV: 'development', DATA_DIR: otherDir }, '--tenant', 'acme');
      const otherSecret = (await fs.readFile(path.join(otherDir, 'auth-jwt-secret'), 'utf8')).trim();
      assert.notEqual(otherSecret, secret);
      assertUnauthorized(await list(other.stdout.trim()), '/products/ingestions', true);
    } finally {
      await fs.rm(otherDir, { recursive: true, force: true });
    }
  });
});
