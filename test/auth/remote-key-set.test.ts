/** AUTH_JWKS_URL when its server fails: no 401s for good tokens, no fetch per request, told once. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair } from 'jose';
import {
  createRemoteKeySet,
  JWKS_COOLDOWN_MS,
  JWKS_MAX_AGE_MS,
  JWKS_RETRY_MS,
  JWKS_STALE_MAX_MS,
  KeySetUnavailableError,
} from '../../src/auth/remote-keys.ts';
import { createTokenVerifier } from '../../src/auth/verify-token.ts';
import { UnauthorizedError } from '../../src/errors/app-errors.ts';
import { sign, startJwksServer, type JwksServer } from '../helpers/auth-fixtures.ts';

let server: JwksServer;
before(async () => {
  server = await startJwksServer();
});
after(() => server?.close());

/**
 * A verifier on the test's key set server that remembers nothing, on a clock the test moves. Its
 * fetches time out after `fetchTimeoutMs`, except those started inside `patiently(step)`: they get
 * 5 s, for the steps whose fetch must succeed (or stay under way), which a short timeout would fail
 * on a stalled machine.
 */
function verifierOn(url: string, { fetchTimeoutMs = 5_000 } = {}) {
  const clock = { now: 0 };
  const told: string[] = [];
  let patient = false;
  let unanswered = 0;
  let started = 0;
  const keySet = createRemoteKeySet(
    new URL(url),
    {
      onOutage: (_error, standIn) => told.push(standIn ? 'outage' : 'outage without a set'),
      onStaleExpired: () => told.push('stale expired'),
      onRecovery: () => told.push('recovery'),
    },
    {
      now: () => clock.now,
      fetchTimeoutMs,
      fetchImpl: (input, init) => {
        started += 1;
        const answered = fetch(input, patient ? { ...init, signal: AbortSignal.timeout(5_000) } : init);
        unanswered += 1;
        const settle = () => {
          unanswered -= 1;
        };
        answered.then(settle, settle);
        return answered;
      },
    },
  );
  const check = createTokenVerifier({
    keys: { secret: undefined, asymmetric: { key: keySet, algorithms: ['ES256', 'RS256'] } },
    tenantClaim: 'tenant_id',
    cacheTtlMs: 0,
  });
  return {
    clock,
    told,
    /**
     * Fetches of the key set this verifier started: counted as it makes them, not as the server
     * receives them, so one whose 200 ms ran out before it reached the server on a stalled machine
     * still counts.
     */
    fetches: () => started,
    /** Fetches started and not yet answered or failed (one waiting on a hung server, say). */
    unanswered: () => unanswered,
    check: (token: string) => check(`Bearer ${token}`, 'catalog:read'),
    /** Runs `step`; the fetches it starts get 5 s instead of `fetchTimeoutMs`. */
    patiently: async <T>(step: () => Promise<T>): Promise<T> => {
      patient = true;
      try {
        return await step();
      } finally {
        patient = false;
      }
    },
  };
}

/** What `promise` settles to: the principal, or the error. */
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (principal) => principal,
    (error: unknown) => error,
  );

/** Waits until `condition` holds (a fetch made in the background has settled), or fails after 2 s. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = performance.now() + 2_000;
  while (!condition()) {
    assert.ok(performance.now() < deadline, 'the background fetch never settled');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ACME = { tenantId: 'acme', scopes: new Set(['catalog:read']) };
const claims = { tenant_id: 'acme', scope: 'catalog:read' };

void describe('the key set of AUTH_JWKS_URL', () => {
  let good: string;
  let unknownKid: string;
  before(async () => {
    good = await sign(server.es.privateKey, claims, { alg: 'ES256', kid: server.es.kid });
    unknownKid = await sign(server.es.privateKey, claims, { alg: 'ES256', kid: 'no-such-kid' });
  });

  void test('down from the start: a good token is 503 (not 401), one fetch per retry window, told once', async () => {
    server.answer('error');
    const { clock, told, fetches, check } = verifierOn(server.url);
    for (let i = 0; i < 5; i++) {
      const error = await outcome(check(good));
      assert.ok(error instanceof KeySetUnavailableError);
      assert.equal(error.status, 503);
      assert.equal(error.slug, 'internal-error');
      assert.equal(error.retryAfterSeconds, JWKS_RETRY_MS / 1000);
    }
    assert.equal(fetches(), 1);
    assert.deepEqual(told, ['outage without a set']);
    // Claims that fail make a token bad whoever signed it: those are 401s even now.
    const expired = await sign(
      server.es.privateKey,
      { ...claims, exp: 1 },
      { alg: 'ES256', kid: server.es.kid },
    );
    const early = await sign(
      server.es.privateKey,
      { ...claims, nbf: 4e9 },
      { alg: 'ES256', kid: server.es.kid },
    );
    const expiredError = await outcome(check(expired));
    assert.ok(expiredError instanceof UnauthorizedError);
    assert.equal(expiredError.detail, 'The bearer token has expired.');
    const earlyError = await outcome(check(early));
    assert.ok(earlyError instanceof UnauthorizedError);
    assert.equal(earlyError.detail, 'The bearer token\'s "nbf" claim is not acceptable.');

    // An hour without any set is told as such, once.
    clock.now += JWKS_STALE_MAX_MS + 1;
    assert.ok((await outcome(check(good))) instanceof KeySetUnavailableError);
    assert.ok((await outcome(check(good))) instanceof KeySetUnavailableError);
    assert.equal(fetches(), 2);
    assert.deepEqual(told, ['outage without a set', 'stale expired']);

    server.answer('keys');
    clock.now += JWKS_RETRY_MS;
    assert.deepEqual(await check(good), ACME);
    assert.equal(fetches(), 3);
    assert.deepEqual(told, ['outage without a set', 'stale expired', 'recovery']);
  });

  void test('an outage after a good fetch: the last set verifies for an hour, then 503, then it recovers', async () => {
    server.answer('keys');
    const { clock, told, fetches, check } = verifierOn(server.url);
    assert.deepEqual(await check(good), ACME);

    server.answer('garbage');
    clock.now += JWKS_MAX_AGE_MS;
    for (let i = 0; i < 5; i++) assert.deepEqual(await check(good), ACME);
    await until(() => told.length === 1);
    for (let i = 0; i < 5; i++) assert.deepEqual(await check(good), ACME);
    assert.equal(fetches(), 2);
    assert.deepEqual(told, ['outage']);
    // A stranger's token naming the set's key is still refused by the last set, and so is one
    // naming a key the set has in another algorithm than the key's.
    const stranger = await generateKeyPair('ES256');
    const forged = await sign(stranger.privateKey, claims, { alg: 'ES256', kid: server.es.kid });
    assert.ok((await outcome(check(forged))) instanceof UnauthorizedError);
    const otherAlg = await sign(server.rsa.privateKey, claims, { alg: 'RS256', kid: server.es.kid });
    assert.ok((await outcome(check(otherAlg))) instanceof UnauthorizedError);

    server.answer('error');
    clock.now += JWKS_STALE_MAX_MS + 1;
    assert.ok((await outcome(check(good))) instanceof KeySetUnavailableError);
    assert.ok((await outcome(check(good))) instanceof KeySetUnavailableError);
    assert.equal(fetches(), 3);
    assert.deepEqual(told, ['outage', 'stale expired']);

    server.answer('keys');
    clock.now += JWKS_RETRY_MS;
    assert.deepEqual(await check(good), ACME);
    assert.deepEqual(told, ['outage', 'stale expired', 'recovery']);
  });

  void test('unknown kids fetch at most once per cooldown while up, and per retry window in an outage', async () => {
    server.answer('keys');
    const { clock, told, fetches, check } = verifierOn(server.url);
    assert.deepEqual(await check(good), ACME);
    for (let i = 0; i < 3; i++) {
      const error = await outcome(check(unknownKid));
      assert.ok(error instanceof UnauthorizedError);
      assert.equal(error.detail, 'The bearer token could not be verified.');
    }
    assert.equal(fetches(), 1, 'within the cooldown, an unknown kid fetches nothing');
    clock.now += JWKS_COOLDOWN_MS;
    for (let i = 0; i < 3; i++) assert.ok((await outcome(check(unknownKid))) instanceof UnauthorizedError);
    assert.equal(fetches(), 2);

    // The server fails: unknown kids may name a key the server now has, so they are 503s, and
    // twenty of them make one fetch, not twenty.
    server.answer('error');
    clock.now += JWKS_COOLDOWN_MS;
    for (let i = 0; i < 20; i++) {
      assert.ok((await outcome(check(unknownKid))) instanceof KeySetUnavailableError);
    }
    assert.equal(fetches(), 3);
    assert.deepEqual(await check(good), ACME);
    assert.deepEqual(told, ['outage']);

    // The recovery is seen, and told, on this path too.
    server.answer('keys');
    clock.now += JWKS_RETRY_MS;
    assert.ok((await outcome(check(unknownKid))) instanceof UnauthorizedError);
    assert.equal(fetches(), 4);
    assert.deepEqual(told, ['outage', 'recovery']);
  });

  void test('a hung server costs one fetch timeout, then the old set serves while retries run behind it', async () => {
    server.answer('hang');
    const cold = verifierOn(server.url, { fetchTimeoutMs: 200 });
    let started = performance.now();
    assert.ok((await outcome(cold.check(good))) instanceof KeySetUnavailableError);
    assert.ok((await outcome(cold.check(good))) instanceof KeySetUnavailableError);
    let waited = performance.now() - started;
    assert.ok(waited >= 190 && waited < 5_000, `waited ${waited} ms`);

    server.answer('keys');
    const warm = verifierOn(server.url, { fetchTimeoutMs: 200 });
    assert.deepEqual(await warm.patiently(() => warm.check(good)), ACME);
    server.answer('hang');
    warm.clock.now += JWKS_MAX_AGE_MS;
    started = performance.now();
    assert.deepEqual(await warm.check(good), ACME);
    waited = performance.now() - started;
    assert.ok(waited >= 190 && waited < 5_000, `waited ${waited} ms`);
    // The next retry is not waited for: the request is answered while that retry still hangs (given
    // 5 s, it cannot time out first).
    warm.clock.now += JWKS_RETRY_MS;
    assert.deepEqual(await warm.patiently(() => warm.check(good)), ACME);
    assert.equal(warm.unanswered(), 1, 'a retry during an outage held the request up');
    assert.deepEqual(warm.told, ['outage']);
    // The retry behind it is made: the first fetch, the one waited for, and this one.
    await until(() => warm.fetches() === 3);
    server.answer('keys');
  });

  void test('a set past its age is fetched again before it verifies: a withdrawn key stops at once', async () => {
    server.answer('keys');
    const { clock, fetches, check } = verifierOn(server.url);
    assert.deepEqual(await check(good), ACME);
    server.withdraw(server.es.kid);
    try {
      clock.now += JWKS_MAX_AGE_MS - 1;
      assert.deepEqual(await check(good), ACME);
      assert.equal(fetches(), 1);
      clock.now += 1;
      assert.ok((await outcome(check(good))) instanceof UnauthorizedError);
      assert.equal(fetches(), 2);
    } finally {
      server.restore();
    }
  });
  void test('many requests at once share one fetch: from cold, at the age mark, and on a hung server', async () => {
    server.answer('keys');
    const { clock, fetches, check, patiently } = verifierOn(server.url, { fetchTimeoutMs: 200 });
    const fifty = () => Promise.all(Array.from({ length: 50 }, () => outcome(check(good))));
    // These two fetches must work (the second one failing would leave an outage behind for the
    // third step), so they get 5 s; the fetch of the hung server times out after 200 ms.
    assert.deepEqual(
      await patiently(fifty),
      Array.from({ length: 50 }, () => ACME),
    );
    assert.equal(fetches(), 1);
    clock.now += JWKS_MAX_AGE_MS;
    assert.deepEqual(
      await patiently(fifty),
      Array.from({ length: 50 }, () => ACME),
    );
    assert.equal(fetches(), 2);
    server.answer('hang');
    clock.now += JWKS_MAX_AGE_MS;
    assert.deepEqual(
      await fifty(),
      Array.from({ length: 50 }, () => ACME),
    );
    assert.equal(fetches(), 3);
    server.answer('keys');
  });

  void test('a key set larger than 1 MiB is refused unread, as an outage', async () => {
    const big = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // Streamed without a length: the cap must hold on what arrives.
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const more = () => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return response.once('drain', more);
        }
        response.end('{"keys":[]}');
      };
      more();
    });
    await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
    try {
      const { told, check } = verifierOn(`http://127.0.0.1:${(big.address() as AddressInfo).port}/jwks`);
      assert.ok((await outcome(check(good))) instanceof KeySetUnavailableError);
      assert.deepEqual(told, ['outage without a set']);
    } finally {
      big.closeAllConnections();
      await new Promise((resolve) => big.close(resolve));
    }
  });

  void test('an event handler that throws changes nothing: an outage is still a 503, a recovery still verifies', async () => {
    server.answer('error');
    const clock = { now: 0 };
    const keySet = createRemoteKeySet(
      new URL(server.url),
      {
        onOutage: () => {
          throw new Error('logger down');
        },
        onStaleExpired: () => {
          throw new Error('logger down');
        },
        onRecovery: () => {
          throw new Error('logger down');
        },
      },
      { now: () => clock.now },
    );
    const check = createTokenVerifier({
      keys: { secret: undefined, asymmetric: { key: keySet, algorithms: ['ES256'] } },
      tenantClaim: 'tenant_id',
      cacheTtlMs: 0,
    });
    assert.ok((await outcome(check(`Bearer ${good}`, 'catalog:read'))) instanceof KeySetUnavailableError);
    server.answer('keys');
    clock.now += JWKS_RETRY_MS;
    assert.deepEqual(await check(`Bearer ${good}`, 'catalog:read'), ACME);
  });
});
