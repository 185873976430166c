import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';
import type { DashboardConfig, UiOidcConfig } from './dashboard-config.ts';

/**
 * What the browser may do on the dashboard's pages. Everything comes from this service, except
 * images: product thumbnails and the analyzer's pictures live on the merchants' hosts, and the
 * analyzer accepts `http:` URLs too (docs/reference.md §8), so the page shows them wherever they are. An image
 * cannot run script, and `Referrer-Policy: no-referrer` keeps the page's address from those hosts.
 * With OpenID Connect sign-in (docs/reference.md §11.9) the page also calls the identity provider (its discovery
 * document and token endpoint, `connectOrigin`); going there to sign in or out is a navigation,
 * which the policy does not limit.
 */
export function dashboardCsp(connectOrigin: string | null = null): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' https: http: data: blob:",
    connectOrigin === null ? "connect-src 'self'" : `connect-src 'self' ${connectOrigin}`,
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy of a dashboard without OpenID Connect sign-in. */
export const DASHBOARD_CSP = dashboardCsp();

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/**
 * Where the built dashboard is: `ui/` beside the compiled code (`dist/ui`, what `npm start` runs),
 * or, when the service runs from its TypeScript sources (tests, `npm run dev`), the last build's
 * `dist/ui`. Null when it was never built.
 */
function builtDashboardDir(): string | null {
  const here = import.meta.dirname;
  const candidates = [path.join(here, '..', 'ui'), path.join(here, '..', '..', 'dist', 'ui')];
  return candidates.find((dir) => existsSync(path.join(dir, 'index.html'))) ?? null;
}

/**
 * The dashboard at `/ui` (docs/ui.md): `index.html` for `/ui` and every `/ui/…` page, never cached
 * (it names the current assets), the hashed assets under `/ui/assets/`, cached for a year, and the
 * public `/ui/config.json`. Every answer under `/ui` carries the security headers above; no other
 * route's response changes.
 */
export async function dashboardRoute(
  app: FastifyInstance,
  { dir = builtDashboardDir(), oidc = null }: { dir?: string | null; oidc?: UiOidcConfig | null } = {},
) {
  const csp = dashboardCsp(oidc === null ? null : new URL(oidc.issuer).origin);
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers({ 'content-security-policy': csp, ...SECURITY_HEADERS });
    return payload;
  });
  // Public on purpose: a page not yet signed in needs it, and an issuer and a public client's id are
  // no secret (the provider shows both to anyone who starts a sign-in).
  const config: DashboardConfig = { oidc };
  app.get('/ui/config.json', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('cache-control', 'no-cache').send(config),
  );
  if (dir === null) {
    // Then /ui is an unknown route (404 not-found), as it is on a worker's operations app.
    app.log.warn('the dashboard is not built (dist/ui): run `npm run build` or `npm start` to serve /ui');
    return;
  }
  const index = readFileSync(path.join(dir, 'index.html'));
  const sendIndex = async (_request: unknown, reply: FastifyReply) =>
    reply.header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
  app.get('/ui', { schema: { hide: true } }, sendIndex);
  app.get('/ui/*', { schema: { hide: true } }, sendIndex);
  await app.register(fastifyStatic, {
    root: path.join(dir, 'assets'),
    prefix: '/ui/assets/',
    index: false,
    // Asset names carry their content's hash: a changed file is a new name.
    maxAge: '365d',
    immutable: true,
    decorateReply: false,
  });
}
