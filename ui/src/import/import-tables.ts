import { diffText } from '../../../src/client/diff-text.ts';
import { h, longId, table, type Child } from '../dom.ts';
import { isSheet, type ImportFile } from './file-items.ts';
import type { FilePreview, ItemError } from './preview-run.ts';
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

/** A file's preview: the totals, then its rows (an item's action, changes as before → after, errors). */
export function previewTable(preview: FilePreview, source: ImportFile): HTMLElement {
  const { totals } = preview;
  const counts: Array<[string, number]> = [
    ['Create', totals.create],
    ['Update', totals.update],
    ['Unchanged', totals.unchanged],
    ['Invalid', totals.invalid],
  ];
  if (!isSheet(source)) counts.push(['Not JSON', totals.not_json]);
  if (preview.warnings > 0) counts.push(['Warnings', preview.warnings]);
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'counts', 'data-testid': 'preview-totals' },
      counts.map(([term, count]) => [h('dt', {}, term), h('dd', {}, count)]),
    ),
    table(
      'Preview of the items',
      ['Item', isSheet(source) ? 'Row' : 'Line', 'External id', 'Action', 'Changes', 'Errors', 'Warnings'],
      preview.rows.map((row) => [
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
      ]),
      'The file holds no items.',
    ),
  );
}

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
        longId(item.batchId, `#/batches/${encodeURIComponent(item.batchId)}`),
      ]),
    ),
  );
}
