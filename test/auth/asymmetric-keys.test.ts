import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generateKeyPair, type CryptoKey } from 'jose';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';
import { startTestServices, type TestService } from '../helpers/test-service.ts';
import {
  assertUnauthorized,
  bearer,
  generateRsaKey,
  sign,
  startJwksServer,
  unsigned,
  type JwksServer,
  type PublishedKey,
} from '../helpers/auth-fixtures.ts';

/** Verification with asymmetric keys: a configured RS256 public key, and a JWKS fetched by URL. */

/** Verifies RS256 with AUTH_JWT_PUBLIC_KEY only (no shared secret). */
let svcRsa: TestService;
/** Verifies with AUTH_JWKS_URL besides the shared secret. */
let svcJwks: TestService;
/** Verifies with an AUTH_JWKS_URL nothing answers at. */
let svcNoJwks: TestService;

let rsa: { privateKey: CryptoKey; publicPem: string };
let es: PublishedKey;
let jwksRsa: PublishedKey;
let jwksServer: JwksServer;

before(async () => {
  [rsa, jwksServer] = await Promise.all([generateRsaKey(), startJwksServer()]);
  ({ es, rsa: jwksRsa } = jwksServer);
  [svcRsa, svcJwks, svcNoJwks] = await startTestServices([
    { AUTH_JWT_SECRET: '', AUTH_JWT_PUBLIC_KEY: rsa.publicPem },
    { AUTH_JWKS_URL: jwksServer.url },
    // Port 1 on the loopback: nothing listens there.
    { AUTH_JWKS_URL: 'http://127.0.0.1:1/.well-known/jwks.json' },
  ]);
});

after(async () => {
  await Promise.all([svcRsa?.stop(), svcJwks?.stop(), svcNoJwks?.stop()]);
  await jwksServer?.close();
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

  void test('AUTH_JWKS_URL unreachable: a token the set would verify is 503 internal-error with Retry-After, not 401', async () => {
    const token = await sign(es.privateKey, claims(svcNoJwks.tenant()), { alg: 'ES256', kid: es.kid });
    const res = await list(svcNoJwks, token);
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.headers['retry-after'], '5');
    assert.equal(res.headers['www-authenticate'], undefined);
    assert.deepEqual(res.json(), {
      type: 'http://service.test/problems/internal-error',
      title: 'Internal server error',
      status: 503,
      detail: 'Bearer tokens cannot be verified right now: the key set is unavailable. Try again shortly.',
      instance: '/products/ingestions',
    });
    // The shared secret does not need the key set.
    const hsRes = await list(svcNoJwks, await svcNoJwks.token(svcNoJwks.tenant()));
    assert.equal(hsRes.statusCode, 200, hsRes.body);
  });
});
