import { h } from '../dom.ts';

/** A webhook secret shown once, read-only, with a copy button. */
export function secretBox(secret: string, heading: string): HTMLElement {
  const field = h('input', {
    id: 'secret',
    type: 'text',
    readonly: true,
    value: secret,
    class: 'mono',
    size: 60,
  });
  const copied = h('span', { role: 'status' });
  return h(
    'div',
    { class: 'card secret' },
    h('h2', {}, heading),
    h(
      'p',
      {},
      'Copy it now: the service never shows it again. Receivers verify each delivery’s signature with it.',
    ),
    h('label', { for: 'secret' }, 'Signing secret'),
    field,
    h(
      'button',
      {
        type: 'button',
        onclick: () => {
          field.select();
          navigator.clipboard.writeText(secret).then(
            () => (copied.textContent = 'Copied.'),
            () => (copied.textContent = 'Copy failed: the secret is selected, copy it with the keyboard.'),
          );
        },
      },
      'Copy',
    ),
    copied,
  );
}
