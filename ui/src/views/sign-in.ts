import { oidcSettings } from '../dashboard-config.ts';
import { h } from '../dom.ts';
import { forgetProviderTokens, startSignIn } from '../oidc.ts';
import { signIn } from '../session.ts';
import type { View } from '../view.ts';

/**
 * Sign in with the company's identity provider when the service names one (docs/reference.md §11.9), or paste
 * a bearer token (development, or a provider the page is not set up for). Either way the token is
 * kept in this tab's sessionStorage only.
 */
export const signInView: View = (main) => {
  main.append(h('h1', {}, 'Sign in'));
  const settings = oidcSettings();
  if (settings) {
    const host = new URL(settings.issuer).host;
    const error = h('p', { class: 'error', role: 'alert', id: 'oidc-error' });
    const button = h(
      'button',
      {
        type: 'button',
        class: 'primary',
        'aria-describedby': 'oidc-help oidc-error',
        onclick: () => {
          button.disabled = true;
          error.textContent = '';
          startSignIn(settings).catch((reason: Error) => {
            error.textContent = reason.message;
            button.disabled = false;
          });
        },
      },
      `Sign in with ${host}`,
    );
    main.append(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'oidc-heading' },
        h('h2', { id: 'oidc-heading' }, 'Company account'),
        h(
          'p',
          { id: 'oidc-help', class: 'help' },
          `Signs you in at your identity provider (${host}) and brings you back here; the session is renewed while you work.`,
        ),
        error,
        button,
      ),
    );
    button.focus();
  }
  main.append(pasteForm(settings === null));
};

/** The form that takes a pasted token. */
function pasteForm(focus: boolean): HTMLElement {
  const error = h('p', { class: 'error', role: 'alert', id: 'token-error' });
  const input = h('textarea', {
    id: 'token',
    name: 'token',
    rows: 5,
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'token-help token-error',
  });
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: (event) => {
        event.preventDefault();
        try {
          signIn(input.value);
          forgetProviderTokens();
          input.value = '';
          location.hash = '#/batches';
        } catch (reason) {
          error.textContent = (reason as Error).message;
          input.focus();
        }
      },
    },
    h('label', { for: 'token' }, 'Bearer token'),
    input,
    h(
      'p',
      { id: 'token-help', class: 'help' },
      'A JWT from your identity provider, or `npm run token -- --tenant <name>` on a development service. ',
      'It stays in this browser tab (sessionStorage) and is sent only in the Authorization header.',
    ),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  if (focus) queueMicrotask(() => input.focus());
  return form;
}
