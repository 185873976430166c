import { BATCH_STATUSES } from '../../../src/ingestion/batch-status.ts';
import { errorText, getJson, query, type Page } from '../api.ts';
import type { BatchStatus } from '../api-types.ts';
import { batchFingerprint, batchProgress, isTerminal, statusBadge } from '../batch-progress.ts';
import { append, h, labelled, longId, replace, table, time } from '../dom.ts';
import { replaceHashQuery } from '../hash-query.ts';
import { debounce, isAbort, latestRequest } from '../live-search.ts';
import { hasScope, missingScopeNote, SCOPES } from '../scopes.ts';
import type { View } from '../view.ts';
import { cursorPager } from '../pager.ts';
import { poll } from '../poller.ts';

const PAGE_SIZE = 20;
/** How long typing in the label search must pause before the list is asked for. */
const TYPING_PAUSE_MS = 250;

/** A page of batches as a table; its empty line names the filters that found nothing. */
function batchesTable(
  data: BatchStatus[],
  { status, label }: { status: string; label: string },
): HTMLElement {
  return table(
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
    label || status
      ? `No batch${label ? ` whose label starts with “${label}”` : ''}${status ? ` is ${status.replaceAll('_', ' ')}` : ''}.`
      : 'No batches yet: import a file to make one.',
  );
}

/**
 * The tenant's batches, newest first, filtered by status and by the start of their label (docs/reference.md
 * §11.1), paged, refreshed live (poller.ts). The status and label are kept in the address.
 */
export const batchesView: View = (main, { query: params }) => {
  const requests = latestRequest();
  /** What the last page drawn showed, so that a poll that finds nothing new redraws nothing. */
  let seen: string | null = null;
  let changed = false;
  let running = false;

  const message = h('p', { class: 'error', role: 'alert' });
  const body = h('div', { 'aria-live': 'polite' });
  /**
   * The status and label the list shows: taken from the fields when a search starts, so that a poll
   * or a page turn meanwhile asks for what is shown, not for a label half typed.
   */
  let status = params.get('status') ?? '';
  let label = params.get('label') ?? '';
  /** Requests on their way: a poll waits for them rather than aborting what the user asked for. */
  let inFlight = 0;
  const typing = debounce(() => {
    status = filter.value;
    label = labelSearch.value;
    void pager.first();
  }, TYPING_PAUSE_MS);
  const filter = h(
    'select',
    { id: 'status-filter', onchange: () => typing.now() },
    h('option', { value: '' }, 'Any status'),
    BATCH_STATUSES.map((value) => h('option', { value }, value.replaceAll('_', ' '))),
  );
  filter.value = status;
  // Prefix and case-sensitive, as the service compares (docs/reference.md §11.1): the placeholder says so.
  const labelSearch = h('input', {
    id: 'label-search',
    type: 'search',
    autocomplete: 'off',
    placeholder: 'Starts with… (case-sensitive)',
    // Wide enough for the whole placeholder (its 29 characters); a phone narrows it only past that.
    size: 30,
    value: label,
    oninput: () => typing.schedule(),
  });

  async function show(cursor: string | null): Promise<string | null | undefined> {
    replaceHashQuery({ status, label });
    const turn = requests.start();
    let page: Page<BatchStatus>;
    inFlight += 1;
    try {
      page = await getJson(`/products/ingestions${query({ limit: PAGE_SIZE, status, label, cursor })}`, {
        signal: turn.signal,
      });
    } catch (error) {
      if (isAbort(error) || !turn.isLatest()) return undefined;
      message.textContent = errorText(error);
      return undefined;
    } finally {
      inFlight -= 1;
    }
    // A poll of the old label answering after the user typed a new one shows nothing.
    if (!turn.isLatest()) return undefined;
    message.textContent = '';
    const fingerprint = `${status}|${label}|${cursor}|${batchFingerprint(page.data)}`;
    changed = fingerprint !== seen;
    running = page.data.some((batch) => !isTerminal(batch));
    seen = fingerprint;
    if (changed) render(page.data);
    return page.next_cursor;
  }

  const render = (data: BatchStatus[]) => replace(body, batchesTable(data, { status, label }));

  const pager = cursorPager(show);
  append(
    main,
    h('h1', {}, 'Batches'),
    h(
      'div',
      { class: 'toolbar' },
      labelled('status-filter', 'Status', filter),
      labelled('label-search', 'Label', labelSearch),
      hasScope(SCOPES.ingestionsWrite)
        ? h('a', { href: '#/import', class: 'button-link' }, 'Import a file')
        : null,
    ),
    missingScopeNote(SCOPES.ingestionsWrite, 'to import files'),
    message,
    body,
    pager.element,
  );
  void pager.first();
  // New batches appear and running ones move: the page shown is read again, slower while still.
  const stopPolling = poll(async () => {
    if (inFlight > 0) return 'running';
    await pager.again();
    return changed ? 'changed' : running ? 'running' : 'same';
  });
  return () => {
    typing.cancel();
    stopPolling();
  };
};
