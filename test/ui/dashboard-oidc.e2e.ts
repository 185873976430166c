/**
 * The dashboard's sign-in with the company's identity provider (docs/reference.md §11.9), in headless
 * Chromium against a real OpenID provider (test/helpers/oidc-provider.ts) whose JWKS the API uses:
 * sign-in by authorization code with PKCE, the tenant's batches, renewal before expiry, sign-out at
 * the provider, and a token of another audience refused. Pasting a token stays available.
 */
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
import { product, skuOf } from '../helpers/catalog-fixtures.ts';
import { lateBound, startedForFile } from '../helpers/file-fixture.ts';
import {
  API_AUDIENCE,
  DASHBOARD_CLIENT_ID,
  OTHER_AUDIENCE,
  startOidcProvider,
} from '../helpers/oidc-provider.ts';
import {
  assertAccessible,
  browserTest,
  DESKTOP,
  PHONE,
  scenario,
  skipBrowser,
  startDashboardWorld,
  watchPolicyViolations,
  type DashboardWorld,
} from './dashboard-browser.ts';

/**
 * Seconds an access token lasts here: the page renews it a quarter of that before it expires. Room
 * enough for a busy machine to sign in and load a view before the first renewal is due.
 */
const ACCESS_TOKEN_TTL = 20;
const SCOPE = 'openid ingestions:read ingestions:write catalog:read';
const TOKEN_KEY = 'catalog-dashboard.token';
const PROVIDER_TOKENS_KEY = 'catalog-dashboard.oidc-tokens';

const started = startedForFile(
  async () => {
    const provider = await startOidcProvider();
    let world: DashboardWorld;
    try {
      world = await startDashboardWorld({
        UI_OIDC_ISSUER: provider.issuer,
        UI_OIDC_CLIENT_ID: DASHBOARD_CLIENT_ID,
        UI_OIDC_SCOPE: SCOPE,
        AUTH_JWKS_URL: `${provider.issuer}/jwks`,
        AUTH_JWT_ISSUER: provider.issuer,
        AUTH_JWT_AUDIENCE: API_AUDIENCE,
      });
    } catch (error) {
      await provider.stop();
      throw error;
    }
    return { provider, world };
  },
  async ({ provider, world }) => {
    await world.stop();
    await provider.stop();
  },
  { skip: skipBrowser !== false },
);
const provider = lateBound(() => started()?.provider, 'the OpenID provider');
const world = lateBound(() => started()?.world, 'the dashboard world');

/** A fresh tab on the sign-in view; nothing but the two loopback servers can be reached from it. */
async function openSignIn(): Promise<Page> {
  const context = await world.browser.newContext({ viewport: DESKTOP });
  await context.route('**/*', (route) =>
    new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort(),
  );
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  watchPolicyViolations(page);
  await page.goto(`${world.baseUrl}/ui/#/sign-in`);
  return page;
}

/** The page's sessionStorage, as the browser functions below see it. */
interface BrowserStorage {
  sessionStorage: { getItem(key: string): string | null };
}

const stored = (page: Page, key: string) =>
  page.evaluate<string | null>(`sessionStorage.getItem(${JSON.stringify(key)})`);

browserTest(
  'sign in at the provider, see the tenant’s batches, renew before expiry, sign out at the provider',
  async (t) => {
    const tenant = world.api.tenant('oidc');
    provider.configure({
      dashboardOrigin: world.baseUrl,
      tenants: { 'ana@example.com': tenant },
      robotTenant: tenant,
      accessTokenTtl: ACCESS_TOKEN_TTL,
    });
    const seedToken = await provider.robotToken(API_AUDIENCE);
    const seeded = product();
    const batchId = await world.api.submit(seedToken, [seeded]);
    await world.api.waitForTerminal(seedToken, batchId);

    const page = await openSignIn();
    await scenario(t, page, 'oidc-sign-in', async () => {
      const host = new URL(provider.issuer).host;
      await assertAccessible(page, 'sign-in (OpenID Connect and pasting)');
      await page.getByRole('button', { name: `Sign in with ${host}` }).click();

      // The provider's own pages: its login, then its consent.
      await page.waitForURL(`${provider.issuer}/**`);
      const authorize = page.url();
      await page.locator('input[name=login]').fill('ana@example.com');
      await page.locator('input[name=password]').fill('any');
      await page.locator('button[type=submit]').click();
      await page.getByRole('button', { name: 'Continue' }).click();

      await page.getByRole('link', { name: batchId }).waitFor();
      assert.equal(page.url(), `${world.baseUrl}/ui/#/batches`, 'the code and state have left the address');
      assert.equal(await page.getByTestId('tenant').textContent(), tenant);
      assert.equal(
        await page.getByTestId('scopes').textContent(),
        'ingestions:read ingestions:write catalog:read',
      );
      assert.ok(authorize.startsWith(provider.issuer), authorize);
      await assertAccessible(page, 'batches (signed in with OpenID Connect)');

      // Renewal: a new access token before the first one expires, accepted by the API.
      const first = (await stored(page, TOKEN_KEY))!;
      const firstRefresh = JSON.parse((await stored(page, PROVIDER_TOKENS_KEY))!).refreshToken as string;
      await page.waitForFunction(
        ([key, old]) => (globalThis as unknown as BrowserStorage).sessionStorage.getItem(key) !== old,
        [TOKEN_KEY, first] as const,
        { timeout: ACCESS_TOKEN_TTL * 1000 },
      );
      const renewed = (await stored(page, TOKEN_KEY))!;
      const check = await world.api.request({
        method: 'GET',
        url: `/products/ingestions/${batchId}`,
        token: renewed,
      });
      assert.equal(check.statusCode, 200);
      assert.equal(check.json().batch_id, batchId);
      // The provider rotates refresh tokens: the first one is spent. (Presenting it again is checked at
      // the end: the provider takes reuse for theft and revokes the whole grant, renewals included.)
      assert.notEqual(JSON.parse((await stored(page, PROVIDER_TOKENS_KEY))!).refreshToken, firstRefresh);
      await page.reload();
      await page.getByRole('link', { name: batchId }).waitFor();
      assert.equal(await stored(page, TOKEN_KEY), renewed, 'a reload keeps the session');

      // A call sent with a token that expired before its renewal (a busy machine, a sleeping tab):
      // the service answers 401, the page renews the session and sends the call again, and stays
      // signed in. The first token, spent, stands in for it.
      const firstExpiry = (
        JSON.parse(Buffer.from(first.split('.')[1]!, 'base64url').toString()) as {
          exp: number;
        }
      ).exp;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, firstExpiry * 1000 + 1_000 - Date.now())),
      );
      const answers: Array<[string, number]> = [];
      page.on('response', (response) => {
        const url = new URL(response.url());
        if (url.pathname === '/products/ingestions') answers.push([url.pathname, response.status()]);
      });
      await page.evaluate(
        `sessionStorage.setItem(${JSON.stringify(TOKEN_KEY)}, ${JSON.stringify(first)}); location.hash = '#/batches?status=completed'`,
      );
      await page.getByRole('link', { name: batchId }).waitFor();
      assert.deepEqual(answers.slice(0, 2), [
        ['/products/ingestions', 401],
        ['/products/ingestions', 200],
      ]);
      assert.equal(await page.getByTestId('tenant').textContent(), tenant);
      assert.equal(await page.locator('.auth-alert').textContent(), '');
      const recovered = (await stored(page, TOKEN_KEY))!;
      assert.notEqual(recovered, first);
      assert.notEqual(recovered, renewed, 'the session was renewed');
      assert.equal(new URL(page.url()).hash, '#/batches?status=completed');

      // Every view of the session, at both widths, each once its data has loaded.
      const views: Array<[string, Locator]> = [
        ['#/batches', page.getByRole('link', { name: batchId })],
        [`#/batches/${batchId}`, page.getByRole('cell', { name: 'No item errors.' })],
        ['#/import', page.getByRole('heading', { level: 1 })],
        ['#/catalog', page.getByRole('link', { name: String(seeded.external_id) })],
        [`#/products/${String(seeded.external_id)}`, page.getByText(skuOf(seeded), { exact: true })],
        // This session's scopes include neither webhooks:manage nor analysis:run: the views say so.
        ['#/webhooks', page.locator('.scope-note[data-scope="webhooks:manage"]')],
        ['#/analyzer', page.locator('.scope-note[data-scope="analysis:run"]')],
      ];
      for (const viewport of [DESKTOP, PHONE]) {
        await page.setViewportSize(viewport);
        for (const [hash, loaded] of views) {
          // Within the page, as its links do: a reload could cut a renewal short.
          await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
          await loaded.waitFor();
          await assertAccessible(page, `${hash} at ${viewport.width} px (signed in with OpenID Connect)`);
        }
      }

      // Sign-out at the provider: its confirmation, then back to the sign-in view with nothing kept.
      // (At 1280 px, where Sign out is in the header; on a phone it waits behind the Session button.)
      await page.setViewportSize(DESKTOP);
      const lastRefresh = JSON.parse((await stored(page, PROVIDER_TOKENS_KEY))!).refreshToken as string;
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL(`${world.baseUrl}/ui/**`);
      await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
      assert.equal(await stored(page, TOKEN_KEY), null);
      assert.equal(await stored(page, PROVIDER_TOKENS_KEY), null);
      // The provider ended the session: its refresh token no longer renews anything, nor the spent one.
      assert.deepEqual(await provider.refresh(lastRefresh), { status: 400, error: 'invalid_grant' });
      assert.deepEqual(await provider.refresh(firstRefresh), { status: 400, error: 'invalid_grant' });
      // Signing in again asks for the login again.
      await page.getByRole('button', { name: `Sign in with ${host}` }).click();
      await page.locator('input[name=login]').waitFor();
    });
  },
);

browserTest(
  'a token of another audience is refused; a pasted token of the API’s audience signs in',
  async (t) => {
    const tenant = world.api.tenant('oidc-paste');
    provider.configure({
      dashboardOrigin: world.baseUrl,
      tenants: {},
      robotTenant: tenant,
      accessTokenTtl: 300,
    });
    const foreign = await provider.robotToken(OTHER_AUDIENCE);
    const refused = await world.api.request({ method: 'GET', url: '/products/ingestions', token: foreign });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.json().type, 'http://service.test/problems/unauthorized');
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="invalid_token"');

    const page = await openSignIn();
    await scenario(t, page, 'oidc-other-audience', async () => {
      await page.getByLabel('Bearer token').fill(foreign);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.locator('.auth-alert').filter({ hasText: 'Not signed in (401)' }).waitFor();

      await page.goto(`${world.baseUrl}/ui/#/sign-in`);
      await page.getByLabel('Bearer token').fill(await provider.robotToken(API_AUDIENCE));
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('cell', { name: /No batches yet/ }).waitFor();
      assert.equal(await page.getByTestId('tenant').textContent(), tenant);
      assert.equal(await stored(page, PROVIDER_TOKENS_KEY), null, 'a pasted token is not renewed');
      await assertAccessible(page, 'batches (signed in with a pasted token)');
    });
  },
);
