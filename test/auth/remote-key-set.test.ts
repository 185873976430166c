/** AUTH_JWKS_URL when its server fails: no 401s for good tokens, no fetch per request, told once. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { generateKeyPair } from 'jose';
import {
  createRemoteKeySet,
  JWKS_RETRY_MS,
  JWKS_STALE_MAX_MS,
  KeySetUnavailableError,
} from '../../src/auth/remote-keys.ts';
import { createTokenVerifier } from '../../src/auth/verify-token.ts';
import { UnauthorizedError } from '../../src/http/errors.ts';
import { sign, startJwksServer, type JwksServer } from '../helpers/auth-fixtures.ts';

let server: JwksServer;
before(async () => {
  server = await startJwksServer();
});
after(() => server?.close());

/** A verifier on AUTH_JWKS_URL that remembers nothing, its key set stale after 100 ms. */
function verifierOn(url: string, { fetchTimeoutMs = 5_000 } = {}) {
  const clock = { now: Date.now() };
  const told: string[] = [];
  const keySet = createRemoteKeySet(
    new URL(url),
    { onOutage: () => told.push('outage'), onRecovery: () => told.push('recovery') },
    { now: () => clock.now, maxAgeMs: 100, fetchTimeoutMs },
  );
  const check = createTokenVerifier({
    keys: { secret: undefined, asymmetric: { key: keySet, algorithms: ['ES256', 'RS256'] } },
    tenantClaim: 'tenant_id',
    cacheTtlMs: 0,
  });
  return { clock, told, check: (token: string) => check(`Bearer ${token}`, 'catalog:read') };
}

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (principal) => principal,
    (error: unknown) => error,
  );

void describe('a key set server that fails', () => {
  let token: string;
  before(async () => {
    token = await sign(
      server.es.privateKey,
      { tenant_id: 'acme', scope: 'catalog:read' },
      {
        alg: 'ES256',
        kid: server.es.kid,
      },
    );
  });

  void test('down from the start: a good token is 503 (not 401), fetched once per retry window, told once', async () => {
    server.answer('error');
    const start = server.fetches();
    const { clock, told, check } = verifierOn(server.url);
    for (let i = 0; i < 5; i++) {
      const error = await outcome(check(token));
      assert.ok(error instanceof KeySetUnavailableError);
      assert.equal(error.status, 503);
      assert.equal(error.slug, 'internal-error');
      assert.deepEqual(error.headers, { 'retry-after': String(JWKS_RETRY_MS / 1000) });
    }
    assert.equal(server.fetches() - start, 1);
    assert.deepEqual(told, ['outage']);

    server.answer('keys');
    clock.now += JWKS_RETRY_MS;
    assert.deepEqual(await check(token), { tenantId: 'acme', scopes: new Set(['catalog:read']) });
    assert.equal(server.fetches() - start, 2);
    assert.deepEqual(told, ['outage', 'recovery']);
  });

  void test('after a good fetch: the last set verifies for an hour of outage, then 503, then it recovers', async () => {
    server.answer('keys');
    const { clock, told, check } = verifierOn(server.url);
    assert.equal(((await check(token)) as { tenantId: string }).tenantId, 'acme');
    const start = server.fetches();

    server.answer('garbage');
    await sleep(150); // jose's own clock: the set is now past its age
    for (let i = 0; i < 5; i++) assert.equal(((await check(token)) as { tenantId: string }).tenantId, 'acme');
    assert.equal(server.fetches() - start, 1);
    assert.deepEqual(told, ['outage']);

    // A stranger's token naming the set's key is still refused by the stale set.
    const stranger = await generateKeyPair('ES256');
    const forged = await sign(
      stranger.privateKey,
      { tenant_id: 'acme', scope: 'catalog:read' },
      {
        alg: 'ES256',
        kid: server.es.kid,
      },
    );
    assert.ok((await outcome(check(forged))) instanceof UnauthorizedError);

    server.answer('error');
    clock.now += JWKS_STALE_MAX_MS + 1;
    assert.ok((await outcome(check(token))) instanceof KeySetUnavailableError);
    assert.equal(server.fetches() - start, 2);

    server.answer('keys');
    clock.now += JWKS_RETRY_MS;
    assert.equal(((await check(token)) as { tenantId: string }).tenantId, 'acme');
    assert.deepEqual(told, ['outage', 'recovery']);
  });

  void test('a hung server costs one fetch timeout, not one per request', async () => {
    server.answer('hang');
    const { check } = verifierOn(server.url, { fetchTimeoutMs: 200 });
    const started = Date.now();
    assert.ok((await outcome(check(token))) instanceof KeySetUnavailableError);
    assert.ok((await outcome(check(token))) instanceof KeySetUnavailableError);
    const waited = Date.now() - started;
    assert.ok(waited >= 200 && waited < 2_000, `waited ${waited} ms`);
    server.answer('keys');
  });

  void test('a token the set has no key for stays a 401 while the server is up', async () => {
    server.answer('keys');
    const { told, check } = verifierOn(server.url);
    const unknownKid = await sign(
      server.es.privateKey,
      { tenant_id: 'acme', scope: 'catalog:read' },
      {
        alg: 'ES256',
        kid: 'no-such-kid',
      },
    );
    const error = await outcome(check(unknownKid));
    assert.ok(error instanceof UnauthorizedError);
    assert.equal(error.detail, 'The bearer token could not be verified.');
    assert.deepEqual(told, []);
  });
});
