import { h } from '../dom.ts';
import { signIn } from '../session.ts';
import type { View } from '../view.ts';

/** Paste a bearer token; it is kept in this tab's sessionStorage only. */
export const signInView: View = (main) => {
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
  main.append(h('h1', {}, 'Sign in'), form);
  input.focus();
};
