/**
 * A real OpenID provider for the dashboard's sign-in tests (docs/reference.md §11.9): the `oidc-provider`
 * package on a loopback port, with its development login and consent pages. It issues JWT access
 * tokens for the API's audience carrying the tenant claim, and refresh tokens to the dashboard (as
 * Keycloak does without `offline_access`); its JWKS is what the API verifies them with.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { ALL_SCOPES } from '../../src/auth/verify-token.ts';

/** The API's audience: `AUTH_JWT_AUDIENCE`, and the resource the dashboard's tokens are for. */
export const API_AUDIENCE = 'https://catalog-api.test/';
/** Another application's audience, whose tokens the API must refuse. */
export const OTHER_AUDIENCE = 'https://other-api.test/';
export const DASHBOARD_CLIENT_ID = 'catalog-dashboard';
/** A confidential client whose tokens (client credentials) seed data and try another audience. */
const ROBOT = { id: 'catalog-robot', secret: 'robot-secret-for-tests-only' };

export interface OidcProviderOptions {
  /** The dashboard's origin: where the provider sends the browser back, and whom CORS admits. */
  dashboardOrigin: string;
  /** The tenant of each login name; the robot's tokens carry `robotTenant`. */
  tenants: Record<string, string>;
  robotTenant: string;
  /** Seconds an access token lasts (short, to see the dashboard renew it). */
  accessTokenTtl: number;
}

export interface TestOidcProvider {
  issuer: string;
  /** A client-credentials access token for `audience` from the robot client. */
  robotToken(audience: string): Promise<string>;
  /** The provider's answer to a refresh with `refreshToken` from the dashboard's client. */
  refresh(refreshToken: string): Promise<{ status: number; error?: string }>;
  configure(options: OidcProviderOptions): void;
  stop(): Promise<void>;
}

/**
 * Starts listening first (the service needs the issuer before it starts) and answers 503 until
 * `configure` names the dashboard's origin (known once the service listens).
 */
export async function startOidcProvider(): Promise<TestOidcProvider> {
  let handler: http.RequestListener | null = null;
  const server = http.createServer((request, response) => {
    if (handler) return handler(request, response);
    response.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let provider: Provider | null = null;

  async function token(body: Record<string, string>) {
    const response = await fetch(`${issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  }

  return {
    issuer,
    configure(options) {
      provider = new Provider(issuer, {
        clients: [
          {
            client_id: DASHBOARD_CLIENT_ID,
            token_endpoint_auth_method: 'none',
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            redirect_uris: [`${options.dashboardOrigin}/ui/callback`],
            post_logout_redirect_uris: [`${options.dashboardOrigin}/ui/`],
          },
          {
            client_id: ROBOT.id,
            client_secret: ROBOT.secret,
            token_endpoint_auth_method: 'client_secret_post',
            grant_types: ['client_credentials'],
            response_types: [],
            redirect_uris: [],
          },
        ],
        jwks: { keys: [signingKey] },
        cookies: { keys: ['cookie-key-for-tests-only'] },
        features: {
          clientCredentials: { enabled: true },
          resourceIndicators: {
            enabled: true,
            defaultResource: async (_ctx, _client, oneOf) => oneOf ?? API_AUDIENCE,
            useGrantedResource: async () => true,
            getResourceServerInfo: async (_ctx, resource) => {
              if (resource !== API_AUDIENCE && resource !== OTHER_AUDIENCE)
                throw new Error('unknown resource');
              return {
                scope: ALL_SCOPES,
                audience: resource,
                accessTokenFormat: 'jwt',
                accessTokenTTL: options.accessTokenTtl,
                jwt: { sign: { alg: 'RS256' } },
              };
            },
          },
        },
        clientBasedCORS: (_ctx, origin) => origin === options.dashboardOrigin,
        issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
        extraTokenClaims: async (_ctx, issued) => ({
          tenant_id:
            'accountId' in issued && issued.accountId
              ? options.tenants[issued.accountId]
              : options.robotTenant,
        }),
        findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
        ttl: {
          AccessToken: options.accessTokenTtl,
          ClientCredentials: options.accessTokenTtl,
          IdToken: 3600,
          RefreshToken: 3600,
          Session: 3600,
          Grant: 3600,
          Interaction: 600,
        },
      });
      const callback = provider.callback();
      handler = (request, response) => void callback(request, response);
    },
    async robotToken(audience) {
      const answer = await token({
        grant_type: 'client_credentials',
        client_id: ROBOT.id,
        client_secret: ROBOT.secret,
        resource: audience,
        scope: ALL_SCOPES,
      });
      if (answer.status !== 200)
        throw new Error(`client credentials refused: ${JSON.stringify(answer.body)}`);
      return answer.body.access_token!;
    },
    async refresh(refreshToken) {
      const answer = await token({
        grant_type: 'refresh_token',
        client_id: DASHBOARD_CLIENT_ID,
        refresh_token: refreshToken,
      });
      return { status: answer.status, error: answer.body.error };
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
