import { WEBHOOK_EVENTS } from '../../../src/webhooks/webhook-events.ts';
import { call, errorText, getJson, type Page } from '../api.ts';
import type { WebhookEndpoint } from '../api-types.ts';
import { h, replace, table, time } from '../dom.ts';
import type { View } from '../view.ts';
import { secretBox } from './secret-box.ts';

/** An endpoint's buttons: rotate its secret, delete it. */
function endpointActions(
  endpoint: WebhookEndpoint,
  act: { rotate(endpoint: WebhookEndpoint): Promise<void>; remove(endpoint: WebhookEndpoint): Promise<void> },
): HTMLElement {
  return h(
    'span',
    { class: 'actions' },
    h(
      'button',
      {
        type: 'button',
        'aria-label': `Rotate secret of ${endpoint.url}`,
        onclick: () => void act.rotate(endpoint),
      },
      'Rotate secret',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        'aria-label': `Delete ${endpoint.url}`,
        onclick: () => void act.remove(endpoint),
      },
      'Delete',
    ),
  );
}

/** The tenant's webhook endpoints: list, create (secret shown once), rotate, delete. */
export const webhooksView: View = (main) => {
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status' });
  const secret = h('div');
  const list = h('div');

  async function load() {
    try {
      const page = await getJson<Page<WebhookEndpoint>>('/webhook-endpoints');
      replace(
        list,
        table(
          'Webhook endpoints',
          ['URL', 'Events', 'Description', 'Enabled', 'Created', 'Actions'],
          page.data.map((endpoint) => [
            h('a', { href: `#/webhooks/${encodeURIComponent(endpoint.id)}` }, endpoint.url),
            endpoint.events.join(', '),
            endpoint.description ?? '—',
            endpoint.enabled ? 'yes' : 'no (disabled)',
            time(endpoint.created_at),
            endpointActions(endpoint, { rotate, remove }),
          ]),
          'No endpoints yet.',
        ),
      );
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  async function rotate(endpoint: WebhookEndpoint) {
    if (!window.confirm(`Rotate the secret of ${endpoint.url}? The old one keeps signing for 24 hours.`))
      return;
    try {
      const answer = await getJson<{ secret: string }>(
        `/webhook-endpoints/${encodeURIComponent(endpoint.id)}/rotate-secret`,
        {
          method: 'POST',
        },
      );
      replace(secret, secretBox(answer.secret, `New secret of ${endpoint.url}`));
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  async function remove(endpoint: WebhookEndpoint) {
    if (!window.confirm(`Delete the endpoint ${endpoint.url}? It gets no further deliveries.`)) return;
    try {
      await call(`/webhook-endpoints/${encodeURIComponent(endpoint.id)}`, { method: 'DELETE' });
      status.textContent = `Deleted ${endpoint.url}.`;
      await load();
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  const url = h('input', {
    id: 'webhook-url',
    type: 'url',
    required: true,
    placeholder: 'https://example.com/hooks/catalog',
  });
  const description = h('input', { id: 'webhook-description', type: 'text', maxlength: 500 });
  const events = WEBHOOK_EVENTS.map((event) =>
    h('input', { type: 'checkbox', id: `event-${event}`, value: event, checked: true }),
  );
  const form = h(
    'form',
    {
      class: 'card',
      onsubmit: (event) => {
        event.preventDefault();
        void (async () => {
          try {
            const created = await getJson<WebhookEndpoint>('/webhook-endpoints', {
              method: 'POST',
              json: {
                url: url.value.trim(),
                events: events.filter((box) => box.checked).map((box) => box.value),
                ...(description.value.trim() ? { description: description.value.trim() } : {}),
              },
            });
            message.textContent = '';
            replace(secret, secretBox(created.secret ?? '', `Endpoint created: ${created.url}`));
            form.reset();
            await load();
          } catch (error) {
            message.textContent = errorText(error);
          }
        })();
      },
    },
    h('h2', {}, 'New endpoint'),
    h('label', { for: 'webhook-url' }, 'URL'),
    url,
    h(
      'fieldset',
      {},
      h('legend', {}, 'Events'),
      events.map((box) => h('span', { class: 'check' }, box, h('label', { for: box.id }, box.value))),
    ),
    h('label', { for: 'webhook-description' }, 'Description (optional)'),
    description,
    h('button', { type: 'submit', class: 'primary' }, 'Create endpoint'),
  );
  main.append(h('h1', {}, 'Webhooks'), message, status, secret, list, form);
  void load();
};
