import { ApiError, call, errorText, getJson, type Page, query } from '../api.ts';
import type { BatchStatus, ErrorSummary, ItemErrors } from '../api-types.ts';
import { batchProgress, isTerminal, statusBadge } from '../batch-progress.ts';
import { download, h, labelled, replace, table, time, type Child } from '../dom.ts';
import type { View } from '../view.ts';
import { cursorPager } from '../pager.ts';
import { poll, type PollOutcome } from '../poller.ts';

/** Error rows shown per page of the table. */
const ROWS_PER_PAGE = 50;

/** How long a batch took, or has taken so far. */
function duration(batch: BatchStatus): string {
  const ms = Date.parse(batch.updated_at) - Date.parse(batch.created_at);
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** One row per error of each failed item, keeping only `code` when given. */
function errorRows(records: ItemErrors[], code: string): Child[][] {
  return records.flatMap((record) =>
    record.errors
      .filter((error) => !code || error.code === code)
      .map((error) => [
        record.index,
        record.external_id ?? '—',
        record.sku ?? '—',
        h('code', {}, error.field === '' ? '(item)' : error.field),
        h('code', {}, error.code),
        error.message,
      ]),
  );
}

/** The status record as a list of facts. */
function batchFacts(batch: BatchStatus): HTMLElement {
  const fact = (term: string, value: Child) => [h('dt', {}, term), h('dd', {}, value)];
  return h(
    'dl',
    { class: 'facts' },
    ...(batch.label === undefined ? [] : [fact('Label', batch.label)]),
    fact('Status', statusBadge(batch.status)),
    fact('Progress', batchProgress(batch)),
    fact('Received', batch.received_count),
    fact('Validated', `${batch.validated_ok} ok, ${batch.validated_failed} failed`),
    fact('Upserted', batch.upserted),
    fact('Failed', batch.failed),
    fact('Created', time(batch.created_at)),
    fact('Updated', time(batch.updated_at)),
    fact(isTerminal(batch) ? 'Took' : 'Running for', duration(batch)),
  );
}

/** The error summary: how many items failed, and a table of the errors by code. */
function summaryContent(report: ErrorSummary): Child[] {
  return [
    h('p', {}, `${report.failed_items} failed item${report.failed_items === 1 ? '' : 's'}.`),
    table(
      'Errors by code',
      ['Code', 'Errors', 'Most frequent fields', 'Sample item indices'],
      report.data.map((entry) => [
        h('code', {}, entry.code),
        entry.count,
        entry.fields.map((field) => (field === '' ? '(item)' : field)).join(', '),
        entry.sample_indices.join(', '),
      ]),
      'No errors.',
    ),
  ];
}

/** Downloads every error of the batch at `path` as CSV, the file named after batch `id`. */
async function downloadErrorsCsv(path: string, id: string): Promise<void> {
  const response = await call(`${path}/errors`, { headers: { accept: 'text/csv' } });
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('text/csv'))
    throw new Error('This service does not offer the errors as CSV (docs/reference.md §10.4).');
  download(await response.blob(), `batch-${id}-errors.csv`);
}

/** One batch: its status record (live until terminal), error summary, per-item errors, CSV. */
export const batchView: View = (main, { id }) => {
  const path = `/products/ingestions/${encodeURIComponent(id)}`;
  const message = h('p', { class: 'error', role: 'alert' });
  const record = h('div', { 'aria-live': 'polite' });
  const summary = h('div');
  const errors = h('div');
  const codeFilter = h('select', { id: 'code-filter', onchange: () => void pager.first() });
  let errorsShown = false;
  let lastStatus = '';

  async function refresh(): Promise<PollOutcome> {
    let batch: BatchStatus;
    try {
      batch = await getJson<BatchStatus>(path);
    } catch (error) {
      message.textContent = errorText(error);
      return error instanceof ApiError && error.status === 404 ? 'done' : 'same';
    }
    replace(record, batchFacts(batch));
    errorSections.hidden = false;
    const changed = batch.status !== lastStatus || batch.updated_at !== record.dataset.updated;
    record.dataset.updated = batch.updated_at;
    if (batch.status !== lastStatus && isTerminal(batch)) {
      await Promise.all([showSummary(), pager.first()]);
    } else if (batch.failed > 0 && !errorsShown) {
      await pager.first();
    }
    lastStatus = batch.status;
    if (isTerminal(batch)) return 'done';
    return changed ? 'changed' : 'running';
  }

  async function showSummary() {
    try {
      const report = await getJson<ErrorSummary>(`${path}/errors/summary`);
      const codes = report.data.map((entry) => entry.code);
      replace(
        codeFilter,
        h('option', { value: '' }, 'Any code'),
        codes.map((code) => h('option', { value: code }, code)),
      );
      replace(summary, ...summaryContent(report));
    } catch (error) {
      replace(summary, h('p', { class: 'notice' }, `No error summary: ${errorText(error)}`));
    }
  }

  /**
   * Shows one page of error rows from `cursor`. With a code filter, further API pages are read until
   * the page is full or the errors end, so a rare code does not show as empty pages.
   */
  async function showErrors(cursor: string | null): Promise<string | null | undefined> {
    const rows: Child[][] = [];
    let next: string | null = cursor;
    try {
      do {
        const page: Page<ItemErrors> = await getJson(
          `${path}/errors${query({ limit: ROWS_PER_PAGE, cursor: next })}`,
        );
        rows.push(...errorRows(page.data, codeFilter.value));
        next = page.next_cursor;
      } while (next !== null && rows.length < ROWS_PER_PAGE);
    } catch (error) {
      replace(errors, h('p', { class: 'error' }, errorText(error)));
      return undefined;
    }
    errorsShown = true;
    replace(
      errors,
      table(
        'Item errors',
        ['Index', 'External id', 'SKU', 'Field', 'Code', 'Message'],
        rows,
        'No item errors.',
      ),
    );
    return next;
  }
  const pager = cursorPager(showErrors, ['Previous errors', 'Next errors']);

  async function downloadCsv() {
    try {
      await downloadErrorsCsv(path, id);
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  // Shown once the batch is read: a batch that does not exist (404) has no errors to filter or download.
  const errorSections = h(
    'div',
    { hidden: true },
    h('h2', {}, 'Errors by code'),
    summary,
    h('h2', {}, 'Item errors'),
    h(
      'div',
      { class: 'toolbar' },
      labelled('code-filter', 'Code', codeFilter),
      h('button', { type: 'button', onclick: () => void downloadCsv() }, 'Download all errors (CSV)'),
    ),
    errors,
    pager.element,
  );
  main.append(
    h('h1', {}, 'Batch ', h('span', { class: 'mono' }, id)),
    h('p', {}, h('a', { href: '#/batches' }, '← All batches')),
    message,
    record,
    errorSections,
  );
  replace(codeFilter, h('option', { value: '' }, 'Any code'));
  void refresh().then((outcome) => {
    if (outcome === 'done') return;
    void showSummary();
    stop = poll(refresh);
  });
  let stop = () => {};
  return () => stop();
};
