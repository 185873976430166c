/**
 * Sign-in with the company's identity provider (docs/reference.md §11.9): OpenID Connect's authorization code
 * flow with PKCE (S256) as a public client, through oauth4webapi. The access token becomes the
 * session's token (session.ts), exactly as a pasted one; the refresh and ID tokens are kept beside it
 * to renew it before it expires and to sign out at the provider.
 *
 * Everything is kept in this tab's sessionStorage, not localStorage or a cookie: it is gone when the
 * tab closes, no other tab or site reads it, the browser never sends it on its own (no CSRF), and the
 * page's CSP admits only this service's scripts, which is what could read it.
 */
import * as oauth from 'oauth4webapi';
import type { UiOidcSettings } from './dashboard-config.ts';
import { currentSession, signIn, signOut, type Session } from './session.ts';

/** The PKCE verifier, state and nonce of a sign-in under way, until the provider sends the tab back. */
const PENDING = 'catalog-dashboard.oidc-pending';
/** The refresh and ID tokens of a session signed in here. */
const TOKENS = 'catalog-dashboard.oidc-tokens';

interface Pending {
  codeVerifier: string;
  state: string;
  nonce: string;
}

interface Tokens {
  refreshToken: string | null;
  idToken: string | null;
}

/** Where the provider sends the tab back with the code: register it at the provider. */
export const callbackUrl = (): string => new URL('/ui/callback', location.origin).href;
/** Where the provider sends the tab after signing out: register it at the provider too. */
const signedOutUrl = (): string => new URL('/ui/', location.origin).href;

/** Plain http is allowed only for a provider on the loopback (the service refuses any other at start). */
function requestOptions(settings: UiOidcSettings) {
  return new URL(settings.issuer).protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};
}

let discovery: { issuer: string; server: Promise<oauth.AuthorizationServer> } | null = null;

/** The provider's metadata from its discovery document, fetched once per page load. */
function authorizationServer(settings: UiOidcSettings): Promise<oauth.AuthorizationServer> {
  if (discovery?.issuer !== settings.issuer) {
    const issuer = new URL(settings.issuer);
    const server = oauth
      .discoveryRequest(issuer, { algorithm: 'oidc', ...requestOptions(settings) })
      .then((response) => oauth.processDiscoveryResponse(issuer, response));
    // A failed fetch is tried again next time rather than remembered.
    server.catch(() => (discovery = null));
    discovery = { issuer: settings.issuer, server };
  }
  return discovery.server;
}

/** A sentence for a failure of the provider or of the exchange with it. */
function explain(error: unknown): Error {
  if (error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError)
    return new Error(
      `The identity provider refused: ${error.error}${error.error_description ? ` (${error.error_description})` : ''}.`,
    );
  if (error instanceof TypeError)
    return new Error('The identity provider cannot be reached: check your connection and try again.');
  return new Error(`Sign-in failed: ${(error as Error).message}`);
}

function readJson<T>(key: string): T | null {
  try {
    return JSON.parse(sessionStorage.getItem(key) ?? 'null') as T | null;
  } catch {
    return null;
  }
}

/** Keeps a token endpoint's answer: the access token as the session, the others beside it. */
function keep(result: oauth.TokenEndpointResponse, previous: Tokens | null): Session {
  const session = signIn(result.access_token);
  const tokens: Tokens = {
    // A provider that does not rotate refresh tokens answers a refresh without a new one.
    refreshToken: result.refresh_token ?? previous?.refreshToken ?? null,
    idToken: result.id_token ?? previous?.idToken ?? null,
  };
  sessionStorage.setItem(TOKENS, JSON.stringify(tokens));
  return session;
}

/** Sends the tab to the provider's sign-in page; it comes back to {@link callbackUrl}. */
export async function startSignIn(settings: UiOidcSettings): Promise<void> {
  let server: oauth.AuthorizationServer;
  try {
    server = await authorizationServer(settings);
  } catch (error) {
    throw explain(error);
  }
  const pending: Pending = {
    codeVerifier: oauth.generateRandomCodeVerifier(),
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
  };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(server.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: settings.clientId,
    response_type: 'code',
    redirect_uri: callbackUrl(),
    scope: settings.scope,
    state: pending.state,
    nonce: pending.nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.href);
}

/**
 * Finishes the sign-in the provider sent the tab back from (`returned` is the callback's URL): the
 * state must be the one this tab sent, the code is exchanged with the PKCE verifier, and the ID
 * token must carry this tab's nonce. Throws a sentence a person can act on.
 */
export async function completeSignIn(settings: UiOidcSettings, returned: URL): Promise<Session> {
  const pending = readJson<Pending>(PENDING);
  sessionStorage.removeItem(PENDING);
  if (!pending)
    throw new Error('This sign-in was not started in this tab, or has already finished: sign in again.');
  try {
    const server = await authorizationServer(settings);
    const client: oauth.Client = { client_id: settings.clientId };
    const params = oauth.validateAuthResponse(server, client, returned, pending.state);
    const response = await oauth.authorizationCodeGrantRequest(
      server,
      client,
      oauth.None(),
      params,
      callbackUrl(),
      pending.codeVerifier,
      requestOptions(settings),
    );
    const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    });
    return keep(result, null);
  } catch (error) {
    throw explain(error);
  }
}

/** Whether the session was signed in here and can be renewed without the person. */
export function canRenew(): boolean {
  return readJson<Tokens>(TOKENS)?.refreshToken != null;
}

/** The renewal under way, shared by every caller while it lasts. */
let renewing: Promise<Session> | null = null;

/**
 * Exchanges the refresh token for a new access token; throws when the provider refuses. Callers at
 * the same time (the timer and a refused call) share one exchange: the provider rotates refresh
 * tokens, and a second use of the spent one would be refused.
 */
export function renew(settings: UiOidcSettings): Promise<Session> {
  renewing ??= exchangeRefreshToken(settings).finally(() => (renewing = null));
  return renewing;
}

async function exchangeRefreshToken(settings: UiOidcSettings): Promise<Session> {
  const tokens = readJson<Tokens>(TOKENS);
  if (!tokens?.refreshToken) throw new Error('This session cannot be renewed: sign in again.');
  const server = await authorizationServer(settings);
  const client: oauth.Client = { client_id: settings.clientId };
  const response = await oauth.refreshTokenGrantRequest(
    server,
    client,
    oauth.None(),
    tokens.refreshToken,
    requestOptions(settings),
  );
  return keep(await oauth.processRefreshTokenResponse(server, client, response), tokens);
}

/**
 * How long before `session` expires to renew it: a quarter of what is left, at most a minute, so a
 * one-hour token is renewed a minute early and a short one well before its end.
 */
export function renewalDelayMs(session: Session, now = Date.now()): number | null {
  if (!session.expiresAt) return null;
  const left = session.expiresAt.getTime() - now;
  return Math.max(0, left - Math.min(60_000, left / 4));
}

/** A refused renewal means the provider ended the session; anything else may pass (a network blip). */
export function providerEndedSession(error: unknown): boolean {
  return error instanceof oauth.ResponseBodyError;
}

/**
 * Forgets the session here and answers where to send the tab to end it at the provider too (its
 * `end_session_endpoint`, coming back to /ui/), or null when the session was not signed in here or
 * the provider has no such endpoint.
 */
export async function signOutEverywhere(settings: UiOidcSettings | null): Promise<string | null> {
  const tokens = readJson<Tokens>(TOKENS);
  const signedInHere = currentSession() !== null && tokens !== null;
  sessionStorage.removeItem(TOKENS);
  sessionStorage.removeItem(PENDING);
  signOut();
  if (!settings || !signedInHere) return null;
  let endpoint: string | undefined;
  try {
    endpoint = (await authorizationServer(settings)).end_session_endpoint;
  } catch {
    return null;
  }
  if (!endpoint) return null;
  const url = new URL(endpoint);
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('post_logout_redirect_uri', signedOutUrl());
  if (tokens.idToken) url.searchParams.set('id_token_hint', tokens.idToken);
  return url.href;
}

/** Forgets the provider's tokens, as when a token is pasted over a session signed in here. */
export function forgetProviderTokens(): void {
  sessionStorage.removeItem(TOKENS);
}
