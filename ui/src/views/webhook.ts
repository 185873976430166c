import { call, errorText, getJson, type Page, query } from '../api.ts';
import type { WebhookDelivery, WebhookEndpoint } from '../api-types.ts';
import { h, longId, replace, table, time } from '../dom.ts';
import type { View } from '../view.ts';
import { cursorPager } from '../pager.ts';
import { poll } from '../poller.ts';

/**
 * A delivery's batch, named by its label when it has one (docs/batch-labels.md), as the product
 * history names it; by its id otherwise.
 */
function batchLink(delivery: WebhookDelivery): HTMLElement {
  const href = `#/batches/${encodeURIComponent(delivery.batch_id)}`;
  if (delivery.batch_label === undefined) return longId(delivery.batch_id, href);
  return h('a', { href, title: delivery.batch_id }, delivery.batch_label);
}

/** One endpoint and its delivery log, newest first, refreshed while deliveries are pending; redeliver. */
export const webhookView: View = (main, { id }) => {
  const path = `/webhook-endpoints/${encodeURIComponent(id)}`;
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status' });
  const facts = h('div');
  const log = h('div', { 'aria-live': 'polite' });
  let seen: string | null = null;
  let changed = false;
  let pending = false;

  async function loadEndpoint() {
    try {
      const endpoint = await getJson<WebhookEndpoint>(path);
      replace(
        facts,
        h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'URL'),
          h('dd', {}, endpoint.url),
          h('dt', {}, 'Events'),
          h('dd', {}, endpoint.events.join(', ')),
          h('dt', {}, 'Enabled'),
          h('dd', {}, endpoint.enabled ? 'yes' : 'no (the receiver answered 410)'),
          h('dt', {}, 'Created'),
          h('dd', {}, time(endpoint.created_at)),
        ),
      );
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  async function redeliver(delivery: WebhookDelivery) {
    try {
      await call(`${path}/deliveries/${encodeURIComponent(delivery.id)}/redeliver`, { method: 'POST' });
      status.textContent = `Delivery ${delivery.id} is sent again soon.`;
      await pager.again();
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  async function showDeliveries(cursor: string | null): Promise<string | null | undefined> {
    const page = await getJson<Page<WebhookDelivery>>(
      `${path}/deliveries${query({ limit: 50, cursor })}`,
    ).catch((error: unknown) => {
      message.textContent = errorText(error);
      return null;
    });
    if (!page) return undefined;
    const fingerprint = `${cursor}|${page.data.map((d) => `${d.id}:${d.status}:${d.attempts}`).join('|')}`;
    changed = fingerprint !== seen;
    pending = page.data.some((delivery) => delivery.status === 'pending');
    seen = fingerprint;
    if (!changed) return page.next_cursor;
    replace(
      log,
      table(
        'Deliveries, newest first',
        [
          'Event',
          'Batch',
          'Status',
          'Attempts',
          'Last answer',
          'Next attempt',
          'Created',
          'Delivered',
          'Actions',
        ],
        page.data.map((delivery) => [
          delivery.event,
          batchLink(delivery),
          h('span', { class: `badge delivery-${delivery.status}` }, delivery.status),
          delivery.attempts,
          delivery.last_error ??
            (delivery.last_status_code === null ? '—' : String(delivery.last_status_code)),
          time(delivery.next_attempt_at),
          time(delivery.created_at),
          time(delivery.delivered_at),
          h(
            'button',
            {
              type: 'button',
              'aria-label': `Redeliver ${delivery.event} of batch ${delivery.batch_label ?? delivery.batch_id}`,
              onclick: () => void redeliver(delivery),
            },
            'Redeliver',
          ),
        ]),
        'No deliveries yet: they appear when a batch of this tenant finishes.',
      ),
    );
    return page.next_cursor;
  }
  const pager = cursorPager(showDeliveries, ['Newer deliveries', 'Older deliveries']);

  main.append(
    h('h1', {}, 'Webhook endpoint'),
    h('p', {}, h('a', { href: '#/webhooks' }, '← All endpoints')),
    message,
    status,
    facts,
    h('h2', {}, 'Delivery log'),
    log,
    pager.element,
  );
  void loadEndpoint();
  void pager.first();
  return poll(async () => {
    await pager.again();
    return changed ? 'changed' : pending ? 'running' : 'same';
  });
};
