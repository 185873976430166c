import { h } from './dom.ts';

/** Paging over an API list's opaque cursors, with "previous" and "next" buttons. */
export interface CursorPager {
  /** The two buttons, to be placed under the list. */
  element: HTMLElement;
  /** Shows the first page again (a new filter, a change). */
  first(): Promise<void>;
  /** Shows the current page again (a poll). */
  again(): Promise<void>;
  /**
   * Shows the page at `cursor`, one a link or a reload kept in the address, with the first page as
   * the one before it (the pages between are not known any more); null is the first page.
   */
  restore(cursor: string | null): Promise<void>;
}

/**
 * Cursors only go forward, so "previous" is the cursor of the page before, kept on a stack. `show`
 * draws the page at `cursor` and returns the next page's cursor (null on the last page), or
 * undefined when it could not (it shows why itself; the position stays).
 */
export function cursorPager(
  show: (cursor: string | null) => Promise<string | null | undefined>,
  [previousLabel, nextLabel] = ['Previous page', 'Next page'],
): CursorPager {
  /** The cursor of each page shown so far, the current one last. */
  const shown: Array<string | null> = [];
  let next: string | null = null;
  const previous = h('button', { type: 'button', disabled: true }, previousLabel);
  const following = h('button', { type: 'button', disabled: true }, nextLabel);

  async function go(cursor: string | null, position: number) {
    const found = await show(cursor);
    if (found === undefined) return;
    shown.splice(position, shown.length, cursor);
    next = found;
    previous.disabled = shown.length <= 1;
    following.disabled = next === null;
  }
  previous.addEventListener('click', () => void go(shown.at(-2) ?? null, shown.length - 2));
  following.addEventListener('click', () => void go(next, shown.length));
  return {
    element: h('div', { class: 'pager' }, previous, following),
    first: () => go(null, 0),
    again: () => go(shown.at(-1) ?? null, Math.max(0, shown.length - 1)),
    restore(cursor) {
      if (cursor === null) return go(null, 0);
      shown.splice(0, shown.length, null);
      return go(cursor, 1);
    },
  };
}
