import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sign } from '../helpers/auth-fixtures.ts';
import { createTokenVerifier } from '../../src/auth/verify-token.ts';
import { ForbiddenError, UnauthorizedError } from '../../src/errors/app-errors.ts';

/** The verifier's cache of verified tokens, on a clock the tests move; no service is started. */

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
    // No iat: the verifier's clock is the test's, years before the real one.
    sign(secret, { iat: undefined, tenant_id: 'acme', scope, exp: expSeconds });
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
    const token = await sign(secret, {
      iat: undefined,
      exp: undefined,
      tenant_id: 'acme',
      scope: 'ingestions:read',
    });
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
    const header = `Bearer ${await sign(ownSecret, { iat: undefined, exp: undefined, tenant_id: 'acme', scope: 'ingestions:read' })}`;
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
    const header = `Bearer ${await sign(secret, {
      iat: undefined,
      tenant_id: 'acme',
      scope: 'ingestions:read',
      nbf: START / 1000 + 30,
      exp: START / 1000 + 3600,
    })}`;
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
