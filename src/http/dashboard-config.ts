/**
 * The dashboard's settings the page itself reads (`/ui/config.json`): its sign-in with the company's
 * identity provider (docs/reference.md §11.9). Read from the environment at start by src/config.ts; the page
 * imports these types, so this file imports nothing of the server.
 */
import { ConfigError, optional } from '../config-values.ts';

/** What the dashboard needs to sign in by OpenID Connect as a public client; served at /ui/config.json. */
export interface UiOidcConfig {
  /** The provider's issuer URL, exactly as its tokens' `iss` and its discovery document say it. */
  issuer: string;
  clientId: string;
  /** Space-separated; always includes `openid`. */
  scope: string;
}

/**
 * `UI_OIDC_ISSUER`, `UI_OIDC_CLIENT_ID` and `UI_OIDC_SCOPE`: both of the first two or neither. The
 * issuer is https, or plain http on the loopback (a provider a developer or a test runs), as for
 * AUTH_JWKS_URL. The page's tokens are useless unless the API can verify them, so a key source other
 * than the development secret is required.
 */
export function uiOidc(env: NodeJS.ProcessEnv): UiOidcConfig | null {
  const issuer = optional(env, 'UI_OIDC_ISSUER');
  const clientId = optional(env, 'UI_OIDC_CLIENT_ID');
  const scope = optional(env, 'UI_OIDC_SCOPE');
  if (issuer === undefined && clientId === undefined) {
    if (scope !== undefined)
      throw new ConfigError('UI_OIDC_SCOPE needs UI_OIDC_ISSUER and UI_OIDC_CLIENT_ID');
    return null;
  }
  if (issuer === undefined || clientId === undefined) {
    throw new ConfigError(
      'UI_OIDC_ISSUER and UI_OIDC_CLIENT_ID go together: set both to offer OpenID Connect sign-in on /ui, or neither',
    );
  }
  const url = URL.canParse(issuer) ? new URL(issuer) : null;
  const loopback = url !== null && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (
    url === null ||
    !(url.protocol === 'https:' || (url.protocol === 'http:' && loopback)) ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== '' ||
    url.password !== ''
  ) {
    throw new ConfigError(
      'UI_OIDC_ISSUER must be the identity provider’s issuer URL: https (plain http only on the loopback), without query, fragment or credentials',
    );
  }
  if (!/^[\x21-\x7e]{1,200}$/.test(clientId)) {
    throw new ConfigError('UI_OIDC_CLIENT_ID must be 1 to 200 printable ASCII characters without spaces');
  }
  const scopes = (scope ?? 'openid').split(' ').filter(Boolean);
  if (!scopes.every((part) => /^[\x21\x23-\x5b\x5d-\x7e]+$/.test(part)) || !scopes.includes('openid')) {
    throw new ConfigError(
      'UI_OIDC_SCOPE must be space-separated OAuth scopes including openid (e.g. "openid ingestions:read catalog:read")',
    );
  }
  if (optional(env, 'AUTH_JWKS_URL') === undefined && optional(env, 'AUTH_JWT_PUBLIC_KEY') === undefined) {
    throw new ConfigError(
      'UI_OIDC_ISSUER needs AUTH_JWKS_URL (or AUTH_JWT_PUBLIC_KEY): the API must verify the tokens the provider issues',
    );
  }
  // The issuer is kept as written: a trailing slash is part of it, and tokens' `iss` must match it.
  return { issuer, clientId, scope: scopes.join(' ') };
}

/** What the page reads at start from `/ui/config.json`: how to sign in besides pasting a token. */
export interface DashboardConfig {
  oidc: UiOidcConfig | null;
}
