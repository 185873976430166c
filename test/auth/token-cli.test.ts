import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';
import { startTestServices, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { loadVerificationKeys } from '../../src/auth/keys.ts';
import { anyCtx, assertUnauthorized, bearer, ENDPOINTS, sign } from '../helpers/auth-fixtures.ts';

/** `npm run token` and key loading: the tokens it prints, and the keys in production and development. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

let svc: TestService;
/** Development mode without any key: the secret is generated into DATA_DIR. */
let svcDev: TestService;
let devDataDir: string;

before(async () => {
  devDataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-dev-'));
  [svc, svcDev] = await startTestServices([
    {},
    { AUTH_JWT_SECRET: '', NODE_ENV: 'development', DATA_DIR: devDataDir },
  ]);
});

after(async () => {
  await Promise.all([svc?.stop(), svcDev?.stop()]);
  if (devDataDir) await fs.rm(devDataDir, { recursive: true, force: true });
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

  void test('a token signed with a development secret made at that moment says so on stderr; otherwise stderr stays empty', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-new-'));
    try {
      const secretFile = path.join(dataDir, 'auth-jwt-secret');
      const first = await cli({ NODE_ENV: 'development', DATA_DIR: dataDir }, '--tenant', 'acme');
      assert.match(first.stdout.trim(), /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.equal(
        first.stderr,
        `token: signed with a development secret created now in ${secretFile}; a service that uses AUTH_JWT_SECRET or another DATA_DIR refuses it: give this command the same setting.\n`,
      );
      // The secret now exists (a service on this DATA_DIR uses it): nothing to warn of.
      const second = await cli({ NODE_ENV: 'development', DATA_DIR: dataDir }, '--tenant', 'acme');
      assert.equal(second.stderr, '');
      // With AUTH_JWT_SECRET no development secret is made, and nothing is said.
      const fresh = path.join(dataDir, 'fresh');
      const shared = await cli(
        { NODE_ENV: 'test', AUTH_JWT_SECRET: svc.secret, DATA_DIR: fresh },
        '--tenant',
        'acme',
      );
      assert.equal(shared.stderr, '');
      await assert.rejects(fs.access(path.join(fresh, 'auth-jwt-secret')), { code: 'ENOENT' });
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  void test('in production without any key, loading keys and starting the service both refuse (ConfigError)', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'auth-prod-'));
    try {
      const config = loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir });
      await assert.rejects(loadVerificationKeys(config), ConfigError);
      assert.deepEqual(await fs.readdir(dataDir), [], 'no secret is generated in production');
      const strong = 'k'.repeat(32);
      const withSecret = loadConfig({ NODE_ENV: 'production', DATA_DIR: dataDir, AUTH_JWT_SECRET: strong });
      assert.deepEqual((await loadVerificationKeys(withSecret)).secret, new TextEncoder().encode(strong));

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

  void test('in production, a secret shorter than 32 bytes or a key set over plain HTTP refuses to start', async () => {
    const production = (env: Record<string, string>) =>
      loadVerificationKeys(loadConfig({ NODE_ENV: 'production', DATA_DIR: devDataDir, ...env }));
    // A one-character secret would let anyone sign for any tenant.
    for (const secret of [' ', 'a', 's3cret', 'k'.repeat(31), 'é'.repeat(15)]) {
      await assert.rejects(production({ AUTH_JWT_SECRET: secret }), {
        name: 'Error',
        message:
          'AUTH_JWT_SECRET must be at least 32 bytes in production (HS256 needs a key as long as its hash); `openssl rand -hex 32` makes one',
      });
    }
    for (const url of ['http://keys.example/jwks.json', 'ftp://keys.example/jwks.json', 'not a url']) {
      await assert.rejects(production({ AUTH_JWKS_URL: url }), {
        message: 'AUTH_JWKS_URL must be an https URL in production (http only on the loopback)',
      });
    }
    for (const url of [
      'https://keys.example/jwks.json',
      'http://127.0.0.1:9/jwks.json',
      'http://localhost:9/k',
    ]) {
      assert.equal(typeof (await production({ AUTH_JWKS_URL: url })).asymmetric?.key, 'function', url);
    }
    // Outside production the same settings start (tests and local runs use short secrets).
    const development = loadConfig({ NODE_ENV: 'development', DATA_DIR: devDataDir, AUTH_JWT_SECRET: 'a' });
    assert.deepEqual((await loadVerificationKeys(development)).secret, new TextEncoder().encode('a'));
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
