import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import type { TestService } from './test-service.ts';
import { product } from './catalog-fixtures.ts';
import { assertProblem, ingestAndRead } from './assertions.ts';

/** Shared pieces of the bearer-authentication tests (docs/reference.md §3): endpoints, tokens, keys, assertions. */

/** What one endpoint needs: its scope, how to call it, and its success status. */
export interface Endpoint {
  name: string;
  scope: string;
  ok: number;
  call(svc: TestService, ctx: Context, headers: Record<string, string>): Promise<LightMyRequestResponse>;
  /** The path, for the problem's `instance`. */
  path(ctx: Context): string;
}

/** Data a tenant owns, so that authorized calls can succeed. */
export interface Context {
  batchId: string;
  externalId: string;
}

/** Every protected endpoint, with the scope it requires. */
export const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /products/ingestions',
    scope: 'ingestions:write',
    ok: 202,
    path: () => '/products/ingestions',
    call: (svc, _ctx, headers) =>
      svc.request({
        method: 'POST',
        url: '/products/ingestions',
        json: { items: [product()] },
        headers,
      }),
  },
  {
    name: 'GET /products/ingestions/{id}',
    scope: 'ingestions:read',
    ok: 200,
    path: (ctx) => `/products/ingestions/${ctx.batchId}`,
    call: (svc, ctx, headers) =>
      svc.request({ method: 'GET', url: `/products/ingestions/${ctx.batchId}`, headers }),
  },
  {
    name: 'GET /products/ingestions/{id}/errors',
    scope: 'ingestions:read',
    ok: 200,
    path: (ctx) => `/products/ingestions/${ctx.batchId}/errors`,
    call: (svc, ctx, headers) =>
      svc.request({ method: 'GET', url: `/products/ingestions/${ctx.batchId}/errors`, headers }),
  },
  {
    name: 'GET /products/ingestions/{id}/errors/summary',
    scope: 'ingestions:read',
    ok: 200,
    path: (ctx) => `/products/ingestions/${ctx.batchId}/errors/summary`,
    call: (svc, ctx, headers) =>
      svc.request({ method: 'GET', url: `/products/ingestions/${ctx.batchId}/errors/summary`, headers }),
  },
  {
    name: 'GET /products/ingestions',
    scope: 'ingestions:read',
    ok: 200,
    path: () => '/products/ingestions',
    call: (svc, _ctx, headers) => svc.request({ method: 'GET', url: '/products/ingestions', headers }),
  },
  {
    name: 'GET /products',
    scope: 'catalog:read',
    ok: 200,
    path: () => '/products',
    call: (svc, _ctx, headers) => svc.request({ method: 'GET', url: '/products', headers }),
  },
  {
    name: 'GET /products/export',
    scope: 'catalog:read',
    ok: 200,
    path: () => '/products/export',
    call: (svc, _ctx, headers) => svc.request({ method: 'GET', url: '/products/export', headers }),
  },
  {
    name: 'GET /products/{external_id}',
    scope: 'catalog:read',
    ok: 200,
    path: (ctx) => `/products/${ctx.externalId}`,
    call: (svc, ctx, headers) => svc.request({ method: 'GET', url: `/products/${ctx.externalId}`, headers }),
  },
];

/** A batch and a product that no tenant owns, for calls whose outcome does not depend on the data. */
export const anyCtx: Context = { batchId: randomUUID(), externalId: 'ext-unknown' };

/** The `Authorization` header carrying `token`. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The current time in seconds, as JWT claims count it. */
export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Signs a JWT; `claims` are the payload (no defaults but iat and a 1 h exp unless given). */
export async function sign(
  key: Uint8Array | CryptoKey,
  claims: JWTPayload,
  header: { alg: string; kid?: string } = { alg: 'HS256' },
): Promise<string> {
  return new SignJWT({ iat: nowSeconds(), exp: nowSeconds() + 3600, ...claims })
    .setProtectedHeader({ typ: 'JWT', ...header })
    .sign(key);
}

/** An unsigned token (`alg: none`), which must never be accepted. */
export function unsigned(claims: JWTPayload, alg = 'none'): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg, typ: 'JWT' })}.${part({ exp: nowSeconds() + 3600, ...claims })}.`;
}

/** Asserts a 401 problem with the contract's `WWW-Authenticate`. */
export function assertUnauthorized(res: LightMyRequestResponse, instance: string, tokenSent: boolean): void {
  assertProblem(res, { slug: 'unauthorized', instance });
  assert.equal(res.headers['www-authenticate'], tokenSent ? 'Bearer error="invalid_token"' : 'Bearer');
}

/** A fresh tenant on `svc` with one batch (one valid, one invalid item) and one stored product. */
export async function tenantWithData(
  svc: TestService,
): Promise<{ tenant: string; token: string; ctx: Context }> {
  const tenant = svc.tenant('auth');
  const token = await svc.token(tenant);
  const item = product();
  const { batchId, final } = await ingestAndRead(svc, token, [item, 'not an object']);
  assert.equal(final.status, 'completed_with_errors');
  return { tenant, token, ctx: { batchId, externalId: item.external_id as string } };
}

/** An RS256 key pair: the private key to sign, the public key as the PEM that AUTH_JWT_PUBLIC_KEY takes. */
export async function generateRsaKey(): Promise<{ privateKey: CryptoKey; publicPem: string }> {
  const pair = await generateKeyPair('RS256', { extractable: true });
  return { privateKey: pair.privateKey, publicPem: await exportSPKI(pair.publicKey) };
}

/** A signing key whose public half is published in a JWKS under `kid`. */
export interface PublishedKey {
  privateKey: CryptoKey;
  kid: string;
}

/** A local JWKS endpoint publishing an ES256 and an RS256 key, for AUTH_JWKS_URL. */
export interface JwksServer {
  url: string;
  es: PublishedKey;
  rsa: PublishedKey;
  /** Requests for the key set so far. */
  fetches(): number;
  /** How the key set is answered from now on: served, a 500, not JSON, or never (a hung server). */
  answer(mode: 'keys' | 'error' | 'garbage' | 'hang'): void;
  /** Publishes the set without the key `kid` until {@link JwksServer.restore}. */
  withdraw(kid: string): void;
  restore(): void;
  close(): Promise<void>;
}

/** Generates an ES256 and an RS256 key and serves their public halves at `/.well-known/jwks.json`. */
export async function startJwksServer(): Promise<JwksServer> {
  const esPair = await generateKeyPair('ES256', { extractable: true });
  const es = { privateKey: esPair.privateKey, kid: `es-${randomUUID()}` };
  const rsaPair = await generateKeyPair('RS256', { extractable: true });
  const rsa = { privateKey: rsaPair.privateKey, kid: `rs-${randomUUID()}` };
  const jwks = {
    keys: [
      { ...(await exportJWK(esPair.publicKey)), kid: es.kid, alg: 'ES256', use: 'sig' },
      { ...(await exportJWK(rsaPair.publicKey)), kid: rsa.kid, alg: 'RS256', use: 'sig' },
    ],
  };
  let fetches = 0;
  let mode: 'keys' | 'error' | 'garbage' | 'hang' = 'keys';
  let withdrawn: string | undefined;
  const server = http.createServer((request, response) => {
    if (request.url !== '/.well-known/jwks.json') return response.writeHead(404).end();
    fetches++;
    if (mode === 'hang') return;
    if (mode === 'error') return response.writeHead(500).end();
    response.writeHead(200, { 'content-type': 'application/json' });
    const published = { keys: jwks.keys.filter((key) => key.kid !== withdrawn) };
    response.end(mode === 'garbage' ? '<html>' : JSON.stringify(published));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    es,
    rsa,
    fetches: () => fetches,
    answer: (next) => {
      mode = next;
    },
    withdraw: (kid) => {
      withdrawn = kid;
    },
    restore: () => {
      withdrawn = undefined;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
