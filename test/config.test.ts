import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../src/config.ts';

const SERVER = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' };

void describe('WORKER_THREAD', () => {
  void test('defaults to a worker thread on a PostgreSQL server and to none on the embedded database', () => {
    assert.equal(loadConfig({ ...SERVER }).worker.thread, true);
    assert.equal(loadConfig({}).worker.thread, false);
  });

  void test('false keeps the worker on the API thread; true is the server default', () => {
    assert.equal(loadConfig({ ...SERVER, WORKER_THREAD: 'false' }).worker.thread, false);
    assert.equal(loadConfig({ ...SERVER, WORKER_THREAD: 'true' }).worker.thread, true);
    assert.equal(loadConfig({ WORKER_THREAD: 'false' }).worker.thread, false);
  });

  void test('true without DATABASE_URL, or a value other than true/false, refuses to start', () => {
    assert.throws(() => loadConfig({ WORKER_THREAD: 'true' }), {
      message: 'WORKER_THREAD=true needs DATABASE_URL: the embedded database lives in one thread',
    });
    assert.throws(() => loadConfig({ WORKER_THREAD: 'true' }), ConfigError);
    assert.throws(() => loadConfig({ ...SERVER, WORKER_THREAD: 'yes' }), {
      message: 'WORKER_THREAD must be true or false',
    });
  });

  void test('only ROLE=all has a worker to move: true with ROLE=api or worker refuses to start', () => {
    assert.equal(loadConfig({ ...SERVER, ROLE: 'api' }).worker.thread, false);
    assert.equal(loadConfig({ ...SERVER, ROLE: 'worker' }).worker.thread, false);
    assert.equal(loadConfig({ ...SERVER, ROLE: 'api', WORKER_THREAD: 'false' }).worker.thread, false);
    for (const role of ['api', 'worker']) {
      assert.throws(
        () => loadConfig({ ...SERVER, ROLE: role, WORKER_THREAD: 'true' }),
        (error) =>
          error instanceof ConfigError &&
          error.message ===
            `WORKER_THREAD=true applies only to ROLE=all (ROLE=${role} runs no worker thread)`,
      );
    }
  });
});

void describe('WORKER_POLL_MS', () => {
  void test('defaults to 500 ms and takes whole milliseconds from 500 to 30 s', () => {
    assert.equal(loadConfig({}).worker.pollMs, 500);
    assert.equal(loadConfig({ WORKER_POLL_MS: '500' }).worker.pollMs, 500);
    assert.equal(loadConfig({ WORKER_POLL_MS: '30000' }).worker.pollMs, 30_000);
    // A job sent by another process waits for the next poll: an hour would break docs/reference.md §5.
    for (const value of ['499', '30001', '3600000', '1.5', 'soon']) {
      assert.throws(() => loadConfig({ WORKER_POLL_MS: value }), ConfigError);
      assert.throws(() => loadConfig({ WORKER_POLL_MS: value }), {
        message: 'WORKER_POLL_MS must be an integer from 500 to 30000',
      });
    }
  });
});

void describe('AUTH_REQUIRE_EXP', () => {
  void test('false by default; true or false, anything else refuses to start', () => {
    assert.equal(loadConfig({}).auth.requireExp, false);
    assert.equal(loadConfig({ AUTH_REQUIRE_EXP: 'true' }).auth.requireExp, true);
    assert.equal(loadConfig({ AUTH_REQUIRE_EXP: 'false' }).auth.requireExp, false);
    // A typo must not quietly leave tokens without exp admitted.
    for (const value of ['TRUE', '1', 'yes']) {
      assert.throws(() => loadConfig({ AUTH_REQUIRE_EXP: value }), {
        message: 'AUTH_REQUIRE_EXP must be true or false',
      });
    }
  });
});

void describe('BATCH_RETENTION_DAYS', () => {
  void test('defaults to 30 days; 0 keeps ended batches for ever; whole days up to 100 years', () => {
    assert.equal(loadConfig({}).worker.batchRetentionDays, 30);
    assert.equal(loadConfig({ BATCH_RETENTION_DAYS: '0' }).worker.batchRetentionDays, 0);
    assert.equal(loadConfig({ BATCH_RETENTION_DAYS: '36500' }).worker.batchRetentionDays, 36_500);
    for (const value of ['-1', '36501', '0.5', 'forever']) {
      assert.throws(() => loadConfig({ BATCH_RETENTION_DAYS: value }), {
        message: 'BATCH_RETENTION_DAYS must be an integer from 0 to 36500',
      });
    }
  });
});

void describe('ANALYSIS_ENABLED', () => {
  void test('defaults to true; a value other than true/false refuses to start rather than load a model', () => {
    assert.equal(loadConfig({}).analysis.enabled, true);
    assert.equal(loadConfig({ ANALYSIS_ENABLED: 'false' }).analysis.enabled, false);
    assert.equal(loadConfig({ ANALYSIS_ENABLED: 'true' }).analysis.enabled, true);
    for (const value of ['no', '0', 'FALSE']) {
      assert.throws(() => loadConfig({ ANALYSIS_ENABLED: value }), {
        message: 'ANALYSIS_ENABLED must be true or false',
      });
    }
  });
});

void describe('REQUEST_TIMEOUT_MS', () => {
  void test("defaults to Node's five minutes and takes whole milliseconds from one second up", () => {
    assert.equal(loadConfig({}).requestTimeoutMs, 300_000);
    assert.equal(loadConfig({ REQUEST_TIMEOUT_MS: '1000' }).requestTimeoutMs, 1000);
    // 0 would be Fastify's "no limit": a trickled body would hold its connection for ever.
    for (const value of ['0', '999', 'never', '2.5']) {
      assert.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: value }), {
        message: 'REQUEST_TIMEOUT_MS must be an integer from 1000 up',
      });
    }
  });
});

void describe('one loader for every variable', () => {
  void test('LOG_LEVEL defaults to info, takes pino levels and refuses anything else', () => {
    assert.equal(loadConfig({}).logLevel, 'info');
    assert.equal(loadConfig({ LOG_LEVEL: 'debug' }).logLevel, 'debug');
    assert.throws(() => loadConfig({ LOG_LEVEL: 'verbose' }), {
      message: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    });
  });

  void test('the analyzer settings are read and checked at start, whatever the role', () => {
    const analysis = loadConfig({
      ANALYSIS_CACHE_TTL_SECONDS: '7',
      ANALYSIS_MAX_QUEUED_IMAGES: '3',
    }).analysis;
    assert.equal(analysis.cacheTtlMs, 7000);
    assert.equal(analysis.maxQueuedImages, 3);
    assert.equal(analysis.vlm, undefined);
    assert.throws(() => loadConfig({ ROLE: 'worker', ANALYSIS_MAX_IMAGES_PER_TENANT: '2' }), {
      message: 'ANALYSIS_MAX_IMAGES_PER_TENANT must be an integer from 10 up',
    });
    assert.throws(() => loadConfig({ ANALYSIS_VLM_URL: 'https://vlm.example/v1' }), {
      message: 'ANALYSIS_VLM_MODEL is required when ANALYSIS_VLM_URL is set',
    });
    assert.throws(() => loadConfig({ ANALYSIS_ALLOW_PRIVATE_HOSTS: 'yes' }), {
      message: 'ANALYSIS_ALLOW_PRIVATE_HOSTS must be true or false',
    });
  });
});

void describe('UI_OIDC_* (the dashboard’s sign-in with an identity provider)', () => {
  const JWKS = { AUTH_JWKS_URL: 'https://login.example.com/jwks' };
  const ISSUER = 'https://login.example.com/realms/acme';

  void test('unset, the dashboard offers pasting only; set, the scope defaults to openid', () => {
    assert.equal(loadConfig({}).uiOidc, null);
    assert.deepEqual(loadConfig({ ...JWKS, UI_OIDC_ISSUER: ISSUER, UI_OIDC_CLIENT_ID: 'catalog' }).uiOidc, {
      issuer: ISSUER,
      clientId: 'catalog',
      scope: 'openid',
    });
    const local = loadConfig({
      AUTH_JWT_PUBLIC_KEY: 'pem',
      UI_OIDC_ISSUER: 'http://127.0.0.1:8080/',
      UI_OIDC_CLIENT_ID: 'dev',
      UI_OIDC_SCOPE: ' openid  catalog:read ',
    }).uiOidc;
    assert.deepEqual(local, {
      issuer: 'http://127.0.0.1:8080/',
      clientId: 'dev',
      scope: 'openid catalog:read',
    });
  });

  void test('each unusable setting refuses to start with a sentence naming it', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { ...JWKS, UI_OIDC_ISSUER: ISSUER },
        'UI_OIDC_ISSUER and UI_OIDC_CLIENT_ID go together: set both to offer OpenID Connect sign-in on /ui, or neither',
      ],
      [
        { ...JWKS, UI_OIDC_CLIENT_ID: 'catalog' },
        'UI_OIDC_ISSUER and UI_OIDC_CLIENT_ID go together: set both to offer OpenID Connect sign-in on /ui, or neither',
      ],
      [{ ...JWKS, UI_OIDC_SCOPE: 'openid' }, 'UI_OIDC_SCOPE needs UI_OIDC_ISSUER and UI_OIDC_CLIENT_ID'],
      ...[
        'http://login.example.com',
        'login.example.com',
        `${ISSUER}?x=1`,
        'https://u:p@login.example.com',
      ].map((issuer): [Record<string, string>, string] => [
        { ...JWKS, UI_OIDC_ISSUER: issuer, UI_OIDC_CLIENT_ID: 'catalog' },
        'UI_OIDC_ISSUER must be the identity provider’s issuer URL: https (plain http only on the loopback), without query, fragment or credentials',
      ]),
      [
        { ...JWKS, UI_OIDC_ISSUER: ISSUER, UI_OIDC_CLIENT_ID: 'has space' },
        'UI_OIDC_CLIENT_ID must be 1 to 200 printable ASCII characters without spaces',
      ],
      ...['profile email', 'openid "quoted"'].map((scope): [Record<string, string>, string] => [
        { ...JWKS, UI_OIDC_ISSUER: ISSUER, UI_OIDC_CLIENT_ID: 'catalog', UI_OIDC_SCOPE: scope },
        'UI_OIDC_SCOPE must be space-separated OAuth scopes including openid (e.g. "openid ingestions:read catalog:read")',
      ]),
      [
        { UI_OIDC_ISSUER: ISSUER, UI_OIDC_CLIENT_ID: 'catalog' },
        'UI_OIDC_ISSUER needs AUTH_JWKS_URL (or AUTH_JWT_PUBLIC_KEY): the API must verify the tokens the provider issues',
      ],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (error) => error instanceof ConfigError && error.message === message,
        JSON.stringify(env),
      );
    }
  });
});

void describe('DATABASE_READ_POOL_SIZE', () => {
  void test('defaults to 8, takes whole connections from 1 to 100 and refuses anything else', () => {
    assert.equal(loadConfig(SERVER).databaseReadPoolSize, 8);
    assert.equal(loadConfig({ ...SERVER, DATABASE_READ_POOL_SIZE: '1' }).databaseReadPoolSize, 1);
    assert.equal(loadConfig({ ...SERVER, DATABASE_READ_POOL_SIZE: '100' }).databaseReadPoolSize, 100);
    for (const value of ['0', '101', 'many', '2.5', '-1']) {
      assert.throws(() => loadConfig({ ...SERVER, DATABASE_READ_POOL_SIZE: value }), {
        message: 'DATABASE_READ_POOL_SIZE must be an integer from 1 to 100',
      });
    }
  });
});
