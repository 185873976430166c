import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CryptoKey } from 'jose';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { assertProblem } from '../helpers/assertions.ts';
import {
  anyCtx,
  assertUnauthorized,
  bearer,
  ENDPOINTS,
  generateRsaKey,
  nowSeconds,
  sign,
  unsigned,
} from '../helpers/auth-fixtures.ts';

/** 401 on every protected endpoint (docs/reference.md §3): missing or unusable credentials, the scheme, exp. */

let svc: TestService;
/** Signs the RS256 tokens that a service with only a shared secret must refuse. */
let rsa: { privateKey: CryptoKey; publicPem: string };

let port: number;

before(async () => {
  [svc, rsa] = await Promise.all([startTestService(), generateRsaKey()]);
  // `inject` folds repeated headers, so the test of two Authorization headers needs a socket.
  await svc.service.app!.listen({ port: 0, host: '127.0.0.1' });
  port = (svc.service.app!.server.address() as AddressInfo).port;
});

/** GET `path` over a socket with these Authorization header fields, each sent as its own line. */
function rawGet(path: string, authorizations: string[]) {
  return new Promise<{ status: number; headers: Headers; body: string }>((resolve, reject) => {
    // Raw header lists get no Host of their own, which HTTP/1.1 requires.
    const headers = [
      'Host',
      `127.0.0.1:${port}`,
      ...authorizations.flatMap((value) => ['Authorization', value]),
    ];
    const request = http.request({ host: '127.0.0.1', port, path, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const fields = new Headers();
        for (const [name, value] of Object.entries(response.headers)) fields.set(name, String(value));
        resolve({ status: response.statusCode ?? 0, headers: fields, body });
      });
    });
    request.on('error', reject);
    request.end();
  });
}

after(async () => {
  await svc?.stop();
});

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `part` with its last character's lowest bit flipped: a bit no byte uses when the length is not a multiple of 4. */
function respelled(part: string): string {
  assert.notEqual(part.length % 4, 0);
  const last = BASE64URL.indexOf(part.at(-1)!);
  const other = `${part.slice(0, -1)}${BASE64URL[last ^ 1]}`;
  assert.deepEqual(Buffer.from(other, 'base64url'), Buffer.from(part, 'base64url'));
  return other;
}

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
        // The valid token respelled: padded, or its last character changed only in its unused bits.
        'padded signature': `${valid}=`,
        'respelled signature': `${head}.${valid.split('.')[1]}.${respelled(signature!)}`,
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

void describe('one Authorization header', () => {
  void test('two Authorization headers are 401, whichever comes first', async () => {
    const token = await svc.token(svc.tenant());
    const basic = `Basic ${Buffer.from('user:pass').toString('base64')}`;
    for (const pair of [
      [`Bearer ${token}`, basic],
      [basic, `Bearer ${token}`],
      [`Bearer ${token}`, `Bearer ${token}`],
    ]) {
      const res = await rawGet('/products/ingestions', pair);
      assert.equal(res.status, 401, res.body);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
      assert.equal(JSON.parse(res.body).detail, 'Send one Authorization header, not several.');
    }
    const single = await rawGet('/products/ingestions', [`Bearer ${token}`]);
    assert.equal(single.status, 200, single.body);
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
  void test('is accepted by default: docs/reference.md §3 does not list a missing exp among the 401s', async () => {
    const key = new TextEncoder().encode(svc.secret);
    const token = await sign(key, { tenant_id: svc.tenant(), scope: ALL_SCOPES, exp: undefined });
    assert.equal(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp, undefined);
    const res = await svc.request({ method: 'GET', url: '/products', token });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { data: [], next_cursor: null });
  });
});
