import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { startTestServices, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { NEEDS_SERVER, startSharedServices } from '../helpers/state-shared-schema.ts';

/** docs/reference.md §4: 429 `rate-limited` per tenant, for the submission rate and for the backlog. */

let limited: TestService;
let drainless: TestService;
before(async () => {
  [limited, drainless] = await startTestServices([
    { RATE_LIMIT_PER_MINUTE: '3' },
    // No worker: nothing drains, so the backlog only grows.
    { ROLE: 'api', MAX_PENDING_ITEMS: '5' },
  ]);
});
after(async () => {
  await Promise.all([limited?.stop(), drainless?.stop()]);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits, if needed, until a new minute has just begun, so that the few submissions of a test
 * fall into one fixed one-minute window however the windows are aligned.
 */
async function startOfQuietMinute(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 40_000) await sleep(60_000 - into + 250);
}

type Requester = Pick<TestService, 'request'>;

const post = (svc: Requester, token: string, items: unknown[]) =>
  svc.request({ method: 'POST', url: '/products/ingestions', token, json: { items } });

const items = (n: number) => Array.from({ length: n }, () => product());

/** An integer number of seconds, at least 1 and at most a minute. */
function assertSeconds(value: unknown, name: string): number {
  assert.equal(typeof value, 'string', `${name} header missing`);
  assert.match(value as string, /^\d+$/, `${name}: ${String(value)}`);
  const seconds = Number(value);
  assert.ok(seconds >= 1 && seconds <= 60, `${name}: ${seconds}`);
  return seconds;
}

/** A 202 with the RateLimit-* headers of `limit` and `remaining`. */
function assertAdmitted(res: LightMyRequestResponse, limit: number, remaining: number): void {
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.headers['ratelimit-limit'], String(limit));
  assert.equal(res.headers['ratelimit-remaining'], String(remaining));
  assertSeconds(res.headers['ratelimit-reset'], 'RateLimit-Reset');
}

/** A 429 problem `rate-limited` with Retry-After and the RateLimit-* headers. */
function assertRateLimited(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const problem = res.json<Record<string, unknown>>();
  assert.equal(problem.type, 'http://service.test/problems/rate-limited');
  assert.equal(problem.status, 429);
  assert.equal(problem.instance, '/products/ingestions');
  assert.equal(typeof problem.title, 'string');
  assert.ok(
    Object.keys(problem).every((key) => ['type', 'title', 'status', 'detail', 'instance'].includes(key)),
    JSON.stringify(problem),
  );
  assertSeconds(res.headers['retry-after'], 'Retry-After');
  assert.match(String(res.headers['ratelimit-limit']), /^\d+$/);
  assert.match(String(res.headers['ratelimit-remaining']), /^\d+$/);
  assertSeconds(res.headers['ratelimit-reset'], 'RateLimit-Reset');
}

/** The ids of a tenant's batches, oldest first. */
async function batchIds(svc: Requester, token: string): Promise<string[]> {
  const res = await svc.request({ method: 'GET', url: '/products/ingestions?limit=100', token });
  assert.equal(res.statusCode, 200, res.body);
  return res
    .json<{ data: Array<{ batch_id: string }> }>()
    .data.map((b) => b.batch_id)
    .reverse();
}

void describe('submission rate (RATE_LIMIT_PER_MINUTE=3)', () => {
  void test('the 4th submission within a minute is refused with 429 and the RateLimit headers', async () => {
    await startOfQuietMinute();
    const token = await limited.token(limited.tenant('rate'));
    const accepted: string[] = [];
    for (const remaining of [2, 1, 0]) {
      const res = await post(limited, token, items(1));
      assertAdmitted(res, 3, remaining);
      accepted.push(res.json<{ batch_id: string }>().batch_id);
    }
    const refused = await post(limited, token, items(1));
    assertRateLimited(refused);
    assert.equal(refused.headers['ratelimit-limit'], '3');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    // Still refused on the next try within the window; a refused submission stores nothing.
    assertRateLimited(await post(limited, token, items(1)));
    assert.deepEqual(await batchIds(limited, token), accepted);
  });

  void test('another tenant is not affected by a tenant over its rate', async () => {
    await startOfQuietMinute();
    const noisy = await limited.token(limited.tenant('noisy'));
    const quiet = await limited.token(limited.tenant('quiet'));
    for (let i = 0; i < 3; i++) assert.equal((await post(limited, noisy, items(1))).statusCode, 202);
    assertRateLimited(await post(limited, noisy, items(1)));
    assertAdmitted(await post(limited, quiet, items(1)), 3, 2);
    assertAdmitted(await post(limited, quiet, items(1)), 3, 1);
  });
  void test('six simultaneous submissions of one tenant: exactly three are admitted', async () => {
    await startOfQuietMinute();
    const token = await limited.token(limited.tenant('burst'));
    const responses = await Promise.all(Array.from({ length: 6 }, () => post(limited, token, items(1))));
    const admitted = responses.filter((res) => res.statusCode === 202);
    assert.equal(admitted.length, 3, responses.map((res) => res.statusCode).join(','));
    assert.deepEqual(admitted.map((res) => res.headers['ratelimit-remaining']).sort(), ['0', '1', '2']);
    for (const res of responses.filter((r) => r.statusCode !== 202)) assertRateLimited(res);
    assert.equal((await batchIds(limited, token)).length, 3);
  });
});

void describe('backlog (MAX_PENDING_ITEMS=5, no worker)', () => {
  void test('5 pending items, then 1 more → 429; another tenant is not affected', async () => {
    const full = await drainless.token(drainless.tenant('backlog'));
    assert.equal((await post(drainless, full, items(5))).statusCode, 202);
    const refused = await post(drainless, full, items(1));
    assertRateLimited(refused);
    assert.equal((await batchIds(drainless, full)).length, 1);

    const stepwise = await drainless.token(drainless.tenant('stepwise'));
    assert.equal((await post(drainless, stepwise, items(4))).statusCode, 202);
    assert.equal((await post(drainless, stepwise, items(1))).statusCode, 202);
    assertRateLimited(await post(drainless, stepwise, items(1)));

    const other = await drainless.token(drainless.tenant('other'));
    assert.equal((await post(drainless, other, items(1))).statusCode, 202);
  });

  void test('a batch that would take the backlog past 5 is refused by its size, and stores nothing', async () => {
    const token = await drainless.token(drainless.tenant('by-size'));
    assert.equal((await post(drainless, token, items(3))).statusCode, 202);
    const refused = await post(drainless, token, items(3));
    assertRateLimited(refused);
    assert.equal(refused.headers['retry-after'], '5');
    assert.equal(
      refused.json<{ detail: string }>().detail,
      'Your tenant has 3 items waiting to be processed; 3 more would pass the limit of 5. Retry shortly.',
    );
    assert.equal((await batchIds(drainless, token)).length, 1);
    // Up to the limit exactly is let in.
    assert.equal((await post(drainless, token, items(2))).statusCode, 202);
    assert.equal((await batchIds(drainless, token)).length, 2);
  });

  void test('four simultaneous 3-item batches onto a backlog of 1: exactly one is let in', async () => {
    const token = await drainless.token(drainless.tenant('by-size-burst'));
    assert.equal((await post(drainless, token, items(1))).statusCode, 202);
    const responses = await Promise.all(Array.from({ length: 4 }, () => post(drainless, token, items(3))));
    assert.deepEqual(responses.map((res) => res.statusCode).sort(), [202, 429, 429, 429]);
    for (const res of responses.filter((r) => r.statusCode === 429)) assertRateLimited(res);
    assert.equal((await batchIds(drainless, token)).length, 2);
  });

  void test('a bad envelope is 400 unless the backlog is already full, which is judged before the body', async () => {
    const token = await drainless.token(drainless.tenant('order'));
    const postBad = () =>
      drainless.request({
        method: 'POST',
        url: '/products/ingestions',
        token,
        json: { items: 'not a list' },
      });
    assert.equal((await post(drainless, token, items(3))).statusCode, 202);
    assert.equal((await postBad()).statusCode, 400);
    assert.equal((await post(drainless, token, items(2))).statusCode, 202);
    assertRateLimited(await postBad());
    assert.equal((await batchIds(drainless, token)).length, 2);
  });

  void test('an empty backlog takes a batch larger than the limit, so a tenant is never locked out', async () => {
    const token = await drainless.token(drainless.tenant('large'));
    assert.equal((await post(drainless, token, items(8))).statusCode, 202);
    assertRateLimited(await post(drainless, token, items(1)));
  });
});

void describe('limits shared by several processes on one PostgreSQL', () => {
  void test(
    'two API instances on one database enforce one rate and one backlog per tenant',
    { skip: process.env.TEST_DATABASE_URL ? false : NEEDS_SERVER },
    async () => {
      const env = { ROLE: 'api', RATE_LIMIT_PER_MINUTE: '3', MAX_PENDING_ITEMS: '5' };
      const shared = await startSharedServices([env, env]);
      try {
        const [a, b] = shared.services as [TestService, TestService];
        await startOfQuietMinute();
        const token = await shared.token(shared.tenant('shared-rate'));
        assertAdmitted(await post(a, token, items(1)), 3, 2);
        assertAdmitted(await post(b, token, items(1)), 3, 1);
        assertAdmitted(await post(a, token, items(1)), 3, 0);
        assertRateLimited(await post(b, token, items(1)));
        assertRateLimited(await post(a, token, items(1)));
        assert.equal((await batchIds(b, token)).length, 3);

        const backlog = await shared.token(shared.tenant('shared-backlog'));
        assert.equal((await post(a, backlog, items(5))).statusCode, 202);
        assertRateLimited(await post(b, backlog, items(1)));
        assert.equal((await batchIds(a, backlog)).length, 1);
      } finally {
        await shared.stop();
      }
    },
  );
});
