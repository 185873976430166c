import './styles.css';
import { onAuthError, renewSessionWith, type ApiError } from './api.ts';
import { loadDashboardConfig, oidcSettings } from './dashboard-config.ts';
import { h, replace } from './dom.ts';
import {
  canRenew,
  completeSignIn,
  providerEndedSession,
  renew,
  renewalDelayMs,
  signOutEverywhere,
} from './oidc.ts';
import { missingScopeNote, SCOPES, type Scope } from './scopes.ts';
import { currentSession, type Session } from './session.ts';
import type { View } from './view.ts';
import { analyzerView } from './views/analyzer.ts';
import { batchView } from './views/batch.ts';
import { batchesView } from './views/batches.ts';
import { catalogView } from './views/catalog.ts';
import { importView } from './views/import.ts';
import { productView } from './views/product.ts';
import { signInView } from './views/sign-in.ts';
import { webhookView } from './views/webhook.ts';
import { webhooksView } from './views/webhooks.ts';

/**
 * Each route: its pattern, its view, its title, the scope its calls need, and what for (the line a
 * token without it reads instead of the view: ui/src/scopes.ts).
 */
const ROUTES: Array<[RegExp, View, string, Scope, string]> = [
  [/^\/(?:batches)?$/, batchesView, 'Batches', SCOPES.ingestionsRead, 'to list batches'],
  [/^\/batches\/([^/]+)$/, batchView, 'Batch', SCOPES.ingestionsRead, 'to read a batch'],
  [/^\/import$/, importView, 'Import', SCOPES.ingestionsWrite, 'to preview and submit imports'],
  [/^\/catalog$/, catalogView, 'Catalog', SCOPES.catalogRead, 'to search the catalog'],
  [/^\/products\/([^/]+)$/, productView, 'Product', SCOPES.catalogRead, 'to read products'],
  [/^\/webhooks$/, webhooksView, 'Webhooks', SCOPES.webhooksManage, 'to list or add endpoints'],
  [
    /^\/webhooks\/([^/]+)$/,
    webhookView,
    'Webhook endpoint',
    SCOPES.webhooksManage,
    'to read an endpoint and its deliveries',
  ],
  [/^\/analyzer$/, analyzerView, 'Analyzer', SCOPES.analysisRun, 'to analyze images'],
];

const NAV: Array<[string, string]> = [
  ['#/batches', 'Batches'],
  ['#/import', 'Import'],
  ['#/catalog', 'Catalog'],
  ['#/webhooks', 'Webhooks'],
  ['#/analyzer', 'Analyzer'],
];

const root = document.getElementById('app')!;
const alert = h('div', { class: 'auth-alert', role: 'alert' });
const main = h('main', { id: 'main', tabindex: -1 });
const sessionBox = h('section', { class: 'session', id: 'session', 'aria-label': 'Session' });
/**
 * On a phone the header is one short bar (docs/ui.md, Views): the session's facts and Sign out wait
 * behind this button; on a wider screen it is not shown and the facts always are.
 */
const sessionToggle = h(
  'button',
  {
    type: 'button',
    class: 'session-toggle',
    'aria-expanded': 'false',
    'aria-controls': 'session',
    onclick: () => setSessionOpen(sessionToggle.getAttribute('aria-expanded') !== 'true'),
  },
  'Session',
);

function setSessionOpen(open: boolean): void {
  sessionToggle.setAttribute('aria-expanded', String(open));
  sessionBox.classList.toggle('open', open);
}
const nav = h(
  'nav',
  { 'aria-label': 'Main' },
  h(
    'ul',
    {},
    NAV.map(([href, text]) => h('li', {}, h('a', { href }, text))),
  ),
);
replace(
  root,
  h(
    'header',
    { class: 'topbar' },
    h('p', { class: 'brand' }, 'Catalog ingestion'),
    nav,
    sessionToggle,
    sessionBox,
  ),
  alert,
  main,
);

let stopView: (() => void) | void;

/** The session summary in the header: tenant, scopes, expiry, and sign-out. */
function showSession(session: Session | null): void {
  nav.hidden = session === null;
  sessionToggle.hidden = session === null;
  setSessionOpen(false);
  if (!session) {
    replace(sessionBox);
    return;
  }
  const expired = session.expiresAt !== null && session.expiresAt.getTime() < Date.now();
  replace(
    sessionBox,
    h(
      'dl',
      { class: 'session-facts' },
      h('dt', {}, 'Tenant'),
      h('dd', { 'data-testid': 'tenant' }, session.tenant ?? '(no tenant claim: every call will be 403)'),
      h('dt', {}, 'Scopes'),
      h('dd', { 'data-testid': 'scopes' }, session.scopes.length ? session.scopes.join(' ') : '(none)'),
      h('dt', {}, 'Expires'),
      h(
        'dd',
        { 'data-testid': 'expiry', class: expired ? 'expired' : '' },
        session.expiresAt ? `${session.expiresAt.toLocaleString()}${expired ? ' (expired)' : ''}` : 'never',
      ),
    ),
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          stopRenewal();
          void signOutEverywhere(oidcSettings()).then((providerUrl) => {
            if (providerUrl) location.assign(providerUrl);
            else location.hash = '#/sign-in';
          });
        },
      },
      'Sign out',
    ),
  );
}

/** Draws the view the hash names; without a session, the sign-in view. */
function route(): void {
  stopView?.();
  replace(alert);
  const [path = '/', search = ''] = location.hash.replace(/^#/, '').split('?');
  const session = currentSession();
  showSession(session);
  for (const link of nav.querySelectorAll('a')) {
    const current = path.startsWith(link.getAttribute('href')!.slice(1));
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  replace(main);
  if (!session || path === '/sign-in') {
    document.title = 'Sign in · Catalog ingestion';
    stopView = signInView(main, { id: '', query: new URLSearchParams(search) });
    return;
  }
  for (const [pattern, view, title, scope, toDo] of ROUTES) {
    const match = pattern.exec(path);
    if (!match) continue;
    document.title = `${title} · Catalog ingestion`;
    const missing = missingScopeNote(scope, toDo);
    if (missing) {
      replace(main, h('h1', { tabindex: -1 }, title), missing);
      return;
    }
    stopView = view(main, { id: decodeURIComponent(match[1] ?? ''), query: new URLSearchParams(search) });
    main.querySelector('h1')?.setAttribute('tabindex', '-1');
    return;
  }
  document.title = 'Not found · Catalog ingestion';
  replace(main, h('h1', {}, 'No such page'), h('p', {}, h('a', { href: '#/batches' }, 'Go to the batches')));
}

let renewal: ReturnType<typeof setTimeout> | undefined;

function stopRenewal(): void {
  clearTimeout(renewal);
  renewal = undefined;
}

/**
 * Renews a session signed in with the identity provider before its token expires, for as long as the
 * provider agrees. When the provider refuses (it ended the session), the tab is signed out; when it
 * cannot be reached, the renewal is tried again shortly, until the token has expired.
 */
function scheduleRenewal(): void {
  stopRenewal();
  const settings = oidcSettings();
  const session = currentSession();
  if (!settings || !session || !canRenew()) return;
  const delay = renewalDelayMs(session);
  if (delay === null) return;
  renewal = setTimeout(() => {
    renew(settings)
      .then((renewed) => {
        showSession(renewed);
        scheduleRenewal();
      })
      .catch((error: unknown) => {
        if (providerEndedSession(error) || (session.expiresAt?.getTime() ?? 0) <= Date.now()) {
          void signOutEverywhere(null).then(() => {
            location.hash = '#/sign-in';
            replace(alert, h('p', {}, 'Your session at the identity provider has ended: sign in again.'));
          });
          return;
        }
        renewal = setTimeout(scheduleRenewal, 5_000);
      });
  }, delay);
}

/** Where the provider sends the tab back after sign-in (oidc.ts `callbackUrl`). */
const CALLBACK_PATH = '/ui/callback';

/** Loads the service's settings, finishes a sign-in the provider has sent the tab back from, then routes. */
async function start(): Promise<void> {
  await loadDashboardConfig();
  const settings = oidcSettings();
  let failure: string | null = null;
  if (location.pathname === CALLBACK_PATH) {
    const returned = new URL(location.href);
    // The code and state leave the address bar (and the history) whatever happens next.
    history.replaceState(null, '', '/ui/#/batches');
    if (!settings) failure = 'This service offers no identity provider sign-in.';
    else
      await completeSignIn(settings, returned).catch((error: Error) => {
        failure = error.message;
        history.replaceState(null, '', '/ui/#/sign-in');
      });
  }
  route();
  if (failure) replace(alert, h('p', {}, failure));
  scheduleRenewal();
}

/**
 * A call refused with 401 that the renewal could not save (api.ts `call`): the service trusts no part
 * of the token, so what its payload claims (tenant, scopes, expiry) is not shown beside the banner:
 * the tab signs out and shows the sign-in view under it (docs/ui.md, Sign in). A 403 keeps the
 * session: the token is valid, only this call needs more.
 */
function showAuthError(error: ApiError): void {
  if (error.status === 401 && currentSession() !== null) {
    stopRenewal();
    void signOutEverywhere(null);
    // replaceState fires no hashchange: route() is called here, once, and the banner drawn after it.
    history.replaceState(null, '', '#/sign-in');
    route();
  }
  replace(alert, h('p', {}, error.message));
}

/**
 * A call refused with 401 renews a session signed in with the identity provider once before anything
 * else: its token may have expired just before the timer's renewal (a busy machine, a sleeping tab).
 */
async function renewRefusedSession(): Promise<boolean> {
  const settings = oidcSettings();
  if (!settings || !canRenew()) return false;
  const renewed = await renew(settings);
  showSession(renewed);
  scheduleRenewal();
  return true;
}

renewSessionWith(renewRefusedSession);
onAuthError(showAuthError);
window.addEventListener('hashchange', () => {
  route();
  scheduleRenewal();
  main.querySelector('h1')?.focus();
});
void start();
