import { errorText, getJson, type Page, query } from '../api.ts';
import type { ProductChange } from '../api-types.ts';
import { h, time, type Child } from '../dom.ts';
import { diffText } from '../../../src/client/diff-text.ts';
import { isAbort, latestRequest } from '../live-search.ts';

/** Entries read per "Older". */
const PAGE_SIZE = 20;

/** Who made a change: the batch (its label, or its id) and item, or a delete through the API. */
function origin(entry: ProductChange): Child {
  if (entry.batch_id === null) return 'through the API';
  const batch = h(
    'a',
    {
      href: `#/batches/${encodeURIComponent(entry.batch_id)}`,
      class: entry.label === undefined ? 'mono' : null,
    },
    entry.label ?? entry.batch_id,
  );
  return ['batch ', batch, entry.index === null ? '' : `, item ${entry.index}`];
}

function entryItem(entry: ProductChange): HTMLElement {
  return h(
    'li',
    { class: 'history-entry' },
    h(
      'p',
      { class: 'history-head' },
      time(entry.at),
      ' ',
      h('span', { class: `badge action-${entry.action}` }, entry.action),
      ' by ',
      origin(entry),
    ),
    entry.diff.length
      ? h(
          'ul',
          { class: 'plain history-diff' },
          entry.diff.map((element) => h('li', {}, h('code', {}, diffText(element)))),
        )
      : null,
  );
}

/** A product's history section, and what reads it again after the page changed the product. */
export interface ProductHistory {
  element: HTMLElement;
  reload(): Promise<void>;
}

/**
 * The product's recorded changes (docs/reference.md §11.3) as a timeline, newest first, each with its time,
 * action, the batch (by its label) and item that made it, and its values before → after in the text
 * the import preview and the command line use (`diffText`). "Older" appends the next page.
 */
export function productHistory(externalId: string): ProductHistory {
  const path = `/products/${encodeURIComponent(externalId)}/history`;
  const message = h('p', { class: 'error', role: 'alert' });
  const list = h('ol', { class: 'timeline', 'aria-label': 'Changes, newest first' });
  const older = h('button', { type: 'button', hidden: true }, 'Older');
  let next: string | null = null;
  // "Older" and a reload (after a delete) may overlap: only the last one asked is drawn.
  const requests = latestRequest();

  async function read(cursor: string | null, fresh: boolean) {
    older.disabled = true;
    const turn = requests.start();
    try {
      const page = await getJson<Page<ProductChange>>(`${path}${query({ limit: PAGE_SIZE, cursor })}`, {
        signal: turn.signal,
      });
      if (!turn.isLatest()) return;
      if (fresh) list.replaceChildren();
      list.append(...page.data.map(entryItem));
      if (fresh && page.data.length === 0) list.append(h('li', { class: 'empty' }, 'No recorded changes.'));
      next = page.next_cursor;
      message.textContent = '';
    } catch (error) {
      if (isAbort(error) || !turn.isLatest()) return;
      message.textContent = errorText(error);
    }
    older.hidden = next === null;
    older.disabled = false;
  }
  older.addEventListener('click', () => void read(next, false));
  void read(null, true);
  return {
    element: h('section', { 'aria-labelledby': 'history-heading' }, [
      h('h2', { id: 'history-heading' }, 'History'),
      message,
      list,
      older,
    ]),
    reload: () => read(null, true),
  };
}
