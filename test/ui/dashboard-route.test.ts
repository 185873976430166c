/**
 * GET /ui: the built dashboard served by the service — index.html never cached, hashed assets cached
 * for a year, the security headers on every answer under /ui and on no other route.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { DASHBOARD_CSP, dashboardCsp } from '../../src/http/dashboard-route.ts';
import { startTestService, type TestService } from '../helpers/test-service.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
let svc: TestService;
/** The same service with OpenID Connect sign-in configured (docs/reference.md §11.9). */
let withOidc: TestService;
let assets: string[];
const OIDC = {
  UI_OIDC_ISSUER: 'https://login.example.com/realms/acme',
  UI_OIDC_CLIENT_ID: 'catalog-dashboard',
  UI_OIDC_SCOPE: 'openid catalog:read',
  AUTH_JWKS_URL: 'https://login.example.com/realms/acme/protocol/openid-connect/certs',
};

before(async () => {
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/build.ts'], { cwd: ROOT });
  assets = await readdir(path.join(ROOT, 'dist', 'ui', 'assets'));
  [svc, withOidc] = await Promise.all([startTestService(), startTestService(OIDC)]);
});
after(() => Promise.all([svc.stop(), withOidc.stop()]));

test('/ui/config.json names the identity provider, or none; with one, the CSP lets the page call its origin', async () => {
  const none = await svc.request({ method: 'GET', url: '/ui/config.json', token: null });
  assert.equal(none.statusCode, 200);
  assert.deepEqual(none.json(), { oidc: null });
  assert.equal(none.headers['cache-control'], 'no-cache');
  assertSecurityHeaders(none.headers);

  const some = await withOidc.request({ method: 'GET', url: '/ui/config.json', token: null });
  assert.equal(some.statusCode, 200);
  assert.deepEqual(some.json(), {
    oidc: { issuer: OIDC.UI_OIDC_ISSUER, clientId: 'catalog-dashboard', scope: 'openid catalog:read' },
  });
  const csp = dashboardCsp('https://login.example.com');
  assert.equal(
    csp,
    DASHBOARD_CSP.replace("connect-src 'self'", "connect-src 'self' https://login.example.com"),
  );
  for (const url of ['/ui/config.json', '/ui/', '/ui/callback']) {
    const res = await withOidc.request({ method: 'GET', url, token: null });
    assert.equal(res.headers['content-security-policy'], csp, url);
  }
  assert.match(
    (await withOidc.request({ method: 'GET', url: '/ui/callback', token: null })).body,
    /<div id="app">/,
  );
});

const SECURITY = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function assertSecurityHeaders(headers: Record<string, unknown>) {
  for (const [name, value] of Object.entries(SECURITY)) assert.equal(headers[name], value, name);
}

test('/ui, /ui/ and any page under it answer the index, not cached, with the security headers', async () => {
  for (const url of ['/ui', '/ui/', '/ui/batches/x']) {
    const res = await svc.request({ method: 'GET', url, token: null });
    assert.equal(res.statusCode, 200, url);
    assert.equal(res.headers['content-type'], 'text/html; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assertSecurityHeaders(res.headers);
    assert.match(
      res.body,
      /<script type="module" crossorigin src="\/ui\/assets\/index-[\w-]+\.js"><\/script>/,
    );
    assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.doesNotMatch(res.body, /<style|style=/, 'no inline style');
  }
  assert.match(DASHBOARD_CSP, /default-src 'self'/);
  assert.match(DASHBOARD_CSP, /frame-ancestors 'none'/);
  assert.doesNotMatch(DASHBOARD_CSP, /unsafe-inline|unsafe-eval/);
});

test('hashed assets are cached for a year as immutable; a missing one is a not-found problem', async () => {
  // The page's script and style, and the spreadsheet readers it loads only when such a file is chosen.
  assert.deepEqual(assets.map((name) => name.replace(/-[\w-]{8}\./, '.')).sort(), [
    'csv-rows.js',
    'index.css',
    'index.js',
    'xlsx-file.js',
    'xlsx-worker.js',
  ]);
  for (const name of assets) {
    const res = await svc.request({ method: 'GET', url: `/ui/assets/${name}`, token: null });
    assert.equal(res.statusCode, 200, name);
    assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(res.headers['content-type']), name.endsWith('.js') ? /javascript/ : /text\/css/);
    assertSecurityHeaders(res.headers);
  }
  const missing = await svc.request({ method: 'GET', url: '/ui/assets/index-missing.js', token: null });
  assert.equal(missing.statusCode, 404);
  assert.equal(missing.headers['content-type'], 'application/problem+json; charset=utf-8');
  assert.equal(missing.json().type, 'http://service.test/problems/not-found');
  assertSecurityHeaders(missing.headers);
});

test('the API’s own answers are unchanged: no dashboard headers, no /ui in the OpenAPI document', async () => {
  const token = await svc.token(svc.tenant());
  for (const url of ['/products/ingestions', '/openapi.json', '/healthz', '/nowhere']) {
    const res = await svc.request({ method: 'GET', url, token });
    for (const name of Object.keys(SECURITY)) assert.equal(res.headers[name], undefined, `${name} on ${url}`);
  }
  const document = (await svc.request({ method: 'GET', url: '/openapi.json', token: null })).json();
  assert.deepEqual(
    Object.keys(document.paths).filter((route) => route.startsWith('/ui')),
    [],
  );
});
