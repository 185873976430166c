import { diffText } from '../../../src/client/diff-text.ts';
import { h, longId, replace, table, type Child } from '../dom.ts';
import { isSheet, type ImportFile } from './file-items.ts';
import { filterChoices, initialFilter, previewPage, type PreviewFilter } from './preview-filter.ts';
import type { FilePreview, ItemError, PreviewRow } from './preview-run.ts';
import type { SentItemErrors } from './sent-errors.ts';

/** The import view's tables: the preview of a file, and the items the service refused after sending. */

/** An item's errors (or warnings): code, field, and for a spreadsheet the row and column of the field. */
function errorList(errors: ItemError[], kind: 'error' | 'warning' = 'error'): Child {
  if (errors.length === 0) return '—';
  return h(
    'ul',
    { class: 'plain', 'data-testid': kind === 'warning' ? 'preview-warnings' : null },
    errors.map((error) =>
      h(
        'li',
        {},
        h('code', {}, error.code),
        ' ',
        error.field || '(item)',
        error.row === undefined ? '' : ` (row ${error.row}, column ${error.column ?? '—'})`,
        ': ',
        error.message,
      ),
    ),
  );
}

/** The rows of the preview table: an item's action, its changes as before → after, errors and warnings. */
function previewRows(rows: readonly PreviewRow[]): Child[][] {
  return rows.map((row) => [
    row.position,
    row.line,
    row.external_id ?? '—',
    h('span', { class: `badge action-${row.action}` }, row.action.replace('_', ' ')),
    row.diff.length
      ? h(
          'ul',
          { class: 'plain', 'data-testid': 'preview-changes' },
          row.diff.map((element) => h('li', {}, diffText(element))),
        )
      : '—',
    errorList(row.errors),
    errorList(row.warnings, 'warning'),
  ]);
}

/**
 * A file's preview: the totals, a choice of which items to show (the changes alone by default when
 * most items change nothing), and the rows a page at a time (preview-filter.ts).
 */
export function previewTable(preview: FilePreview, source: ImportFile): HTMLElement {
  const { totals } = preview;
  const counts: Array<[string, number]> = [
    ['Create', totals.create],
    ['Update', totals.update],
    ['Unchanged', totals.unchanged],
    ['Invalid', totals.invalid],
  ];
  if (preview.warnings > 0) counts.push(['Warnings', preview.warnings]);
  const headers = [
    'Item',
    isSheet(source) ? 'Row' : 'Line',
    'External id',
    'Action',
    'Changes',
    'Errors',
    'Warnings',
  ];
  let filter = initialFilter(preview);
  let page = 1;
  const tableBox = h('div');
  const where = h('span', { 'aria-live': 'polite' });
  const previous = h('button', { type: 'button' }, 'Previous page');
  const next = h('button', { type: 'button' }, 'Next page');
  const draw = () => {
    const shown = previewPage(preview.rows, filter, page);
    page = shown.page;
    replace(tableBox, table('Preview of the items', headers, previewRows(shown.rows), emptyText(filter)));
    where.textContent = `Page ${shown.page} of ${shown.pages} (${shown.matching} items)`;
    previous.disabled = shown.page <= 1;
    next.disabled = shown.page >= shown.pages;
  };
  previous.addEventListener('click', () => {
    page--;
    draw();
  });
  next.addEventListener('click', () => {
    page++;
    draw();
  });
  const choices = h(
    'fieldset',
    { class: 'filters', 'data-testid': 'preview-filter' },
    h('legend', {}, 'Show'),
    filterChoices(preview).map((choice) =>
      h(
        'label',
        { class: 'check' },
        h('input', {
          type: 'radio',
          name: 'preview-filter',
          value: choice.filter,
          checked: choice.filter === filter,
          onchange: () => {
            filter = choice.filter;
            page = 1;
            draw();
          },
        }),
        ` ${choice.label} (${choice.count})`,
      ),
    ),
  );
  draw();
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'counts', 'data-testid': 'preview-totals' },
      counts.map(([term, count]) => [h('dt', {}, term), h('dd', {}, count)]),
    ),
    choices,
    tableBox,
    h('div', { class: 'pager', 'data-testid': 'preview-pager' }, previous, next, where),
  );
}

/** What an empty page of the table says. */
const emptyText = (filter: PreviewFilter) =>
  filter === 'all' ? 'The file holds no items.' : 'No item of the file is of this kind.';

/** The failed items of the submitted batches, at their place in the file. */
export function sentErrorsTable(failed: SentItemErrors[], source: ImportFile): HTMLElement {
  return h(
    'div',
    {},
    h('h2', {}, 'Items the service refused'),
    table(
      'Items the service refused',
      ['Item', isSheet(source) ? 'Row' : 'Line', 'External id', 'SKU', 'Errors', 'Batch'],
      failed.map((item) => [
        item.position,
        item.line,
        item.external_id ?? '—',
        item.sku ?? '—',
        errorList(item.errors),
        item.batchId === null
          ? 'refused alone'
          : longId(item.batchId, `#/batches/${encodeURIComponent(item.batchId)}`),
      ]),
    ),
  );
}
