import { BATCH_STATUSES } from '../../../src/ingestion/batch-status.ts';
import { errorText, getJson, query, type Page } from '../api.ts';
import type { BatchStatus } from '../api-types.ts';
import { batchFingerprint, batchProgress, isTerminal, statusBadge } from '../batch-progress.ts';
import { h, longId, replace, table, time } from '../dom.ts';
import type { View } from '../view.ts';
import { cursorPager } from '../pager.ts';
import { poll } from '../poller.ts';

const PAGE_SIZE = 20;

/** The tenant's batches, newest first, filtered by status, paged, refreshed live (poller.ts). */
export const batchesView: View = (main) => {
  let status = '';
  /** What the last page drawn showed, so that a poll that finds nothing new redraws nothing. */
  let seen: string | null = null;
  let changed = false;
  let running = false;

  const message = h('p', { class: 'error', role: 'alert' });
  const body = h('div', { 'aria-live': 'polite' });
  const filter = h(
    'select',
    {
      id: 'status-filter',
      onchange: () => {
        status = filter.value;
        void pager.first();
      },
    },
    h('option', { value: '' }, 'Any status'),
    BATCH_STATUSES.map((value) => h('option', { value }, value.replaceAll('_', ' '))),
  );

  async function show(cursor: string | null): Promise<string | null | undefined> {
    let page: Page<BatchStatus>;
    try {
      page = await getJson(`/products/ingestions${query({ limit: PAGE_SIZE, status, cursor })}`);
      message.textContent = '';
    } catch (error) {
      message.textContent = errorText(error);
      return undefined;
    }
    const fingerprint = `${status}|${cursor}|${batchFingerprint(page.data)}`;
    changed = fingerprint !== seen;
    running = page.data.some((batch) => !isTerminal(batch));
    seen = fingerprint;
    if (changed) render(page.data);
    return page.next_cursor;
  }

  function render(data: BatchStatus[]) {
    replace(
      body,
      table(
        'Batches, newest first',
        ['Batch', 'Label', 'Status', 'Progress', 'Received', 'Upserted', 'Failed', 'Created', 'Updated'],
        data.map((batch) => [
          longId(batch.batch_id, `#/batches/${encodeURIComponent(batch.batch_id)}`),
          batch.label ?? '',
          statusBadge(batch.status),
          batchProgress(batch),
          batch.received_count,
          batch.upserted,
          batch.failed,
          time(batch.created_at),
          time(batch.updated_at),
        ]),
        status ? `No batch is ${status.replaceAll('_', ' ')}.` : 'No batches yet: import a file to make one.',
      ),
    );
  }

  const pager = cursorPager(show);
  main.append(
    h('h1', {}, 'Batches'),
    h(
      'div',
      { class: 'toolbar' },
      h('label', { for: 'status-filter' }, 'Status'),
      filter,
      h('a', { href: '#/import', class: 'button-link' }, 'Import a file'),
    ),
    message,
    body,
    pager.element,
  );
  void pager.first();
  // New batches appear and running ones move: the page shown is read again, slower while still.
  return poll(async () => {
    await pager.again();
    return changed ? 'changed' : running ? 'running' : 'same';
  });
};
