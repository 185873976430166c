import type { FilePreview, PreviewRow } from './preview-rows.ts';

/**
 * Which rows of a file's preview the table shows, and which page of them (docs/ui.md, "Import"). A
 * real update file changes a few items of thousands: listing them all buried the changes, so the
 * table shows the changes alone by default when most items are unchanged. No DOM here: the choice
 * and the paging are tested without a page.
 */

/** What the table can show: every item, the items that change or fail, one action, or the warned ones. */
export type PreviewFilter = 'all' | 'changes' | PreviewRow['action'] | 'warnings';

/** Rows on one page of the preview table. */
export const PREVIEW_PAGE_ROWS = 100;

/** Whether `row` is shown under `filter`. "Changes" are the items that would create, update or fail. */
export function shows(filter: PreviewFilter, row: PreviewRow): boolean {
  switch (filter) {
    case 'all':
      return true;
    case 'changes':
      return row.action !== 'unchanged';
    case 'warnings':
      return row.warnings.length > 0;
    case 'create':
    case 'update':
    case 'unchanged':
    case 'invalid':
      return row.action === filter;
  }
}

/** The filter a new preview opens with: the changes, when more than half of the items change nothing. */
export const initialFilter = (preview: FilePreview): PreviewFilter =>
  preview.totals.unchanged * 2 > preview.items ? 'changes' : 'all';

/** A filter the table offers, with how many items it shows. */
export interface FilterChoice {
  filter: PreviewFilter;
  label: string;
  count: number;
}

/** The filters worth offering for `preview`: always all and changes, then each action that some item has. */
export function filterChoices(preview: FilePreview): FilterChoice[] {
  const { totals, items } = preview;
  const choices: FilterChoice[] = [
    { filter: 'changes', label: 'Changes', count: items - totals.unchanged },
    { filter: 'all', label: 'All', count: items },
  ];
  const actions: Array<[PreviewRow['action'], string]> = [
    ['create', 'Create'],
    ['update', 'Update'],
    ['unchanged', 'Unchanged'],
    ['invalid', 'Invalid'],
  ];
  for (const [action, label] of actions) {
    if (totals[action] > 0) choices.push({ filter: action, label, count: totals[action] });
  }
  const warned = preview.rows.filter((row) => row.warnings.length > 0).length;
  if (warned > 0) choices.push({ filter: 'warnings', label: 'Warnings', count: warned });
  return choices;
}

/** One page of the rows `filter` shows: its rows, its number (from 1) and how many pages there are. */
export function previewPage(
  rows: readonly PreviewRow[],
  filter: PreviewFilter,
  page: number,
): { rows: PreviewRow[]; page: number; pages: number; matching: number } {
  const matching = rows.filter((row) => shows(filter, row));
  const pages = Math.max(1, Math.ceil(matching.length / PREVIEW_PAGE_ROWS));
  const current = Math.min(Math.max(1, page), pages);
  const start = (current - 1) * PREVIEW_PAGE_ROWS;
  return {
    rows: matching.slice(start, start + PREVIEW_PAGE_ROWS),
    page: current,
    pages,
    matching: matching.length,
  };
}
