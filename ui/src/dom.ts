/** What `h` accepts as children: nodes, text, nothing, or lists of those. */
export type Child = Node | string | number | null | undefined | false | Child[];

/** Attributes: `on<event>` adds a listener, `value` sets the property, `false`/null omit. */
export type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

const PROPERTIES = new Set(['value']);

/** Appends `children` (flattened) to `parent`. */
export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, ...child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/**
 * Creates an element. Text is always set as text, never parsed as HTML, so values from the API
 * (names, messages, URLs) cannot inject markup.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (PROPERTIES.has(name)) Reflect.set(element, name, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, ...children);
  return element;
}

/** Replaces everything inside `parent` with `children`. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, ...children);
}

/**
 * A table whose body rows come from `rows`; wrapped in a focusable region so it scrolls by keyboard.
 * Each cell carries its column's name in `data-label`, which only a phone's layout shows (styles.css
 * lays rows out as labelled cards under 600 px, the label as generated text that screen readers
 * skip: they name the column from the header, as in any table). The roles are explicit because the
 * phone layout changes the elements' `display`, which makes some browsers drop a table's semantics.
 */
export function table(
  label: string,
  headers: string[],
  rows: Child[][],
  empty = 'Nothing to show.',
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': label, tabindex: 0 },
    h(
      'table',
      { role: 'table' },
      h('caption', { class: 'visually-hidden' }, label),
      h(
        'thead',
        { role: 'rowgroup' },
        h(
          'tr',
          { role: 'row' },
          headers.map((header) => h('th', { scope: 'col', role: 'columnheader' }, header)),
        ),
      ),
      h(
        'tbody',
        { role: 'rowgroup' },
        rows.length === 0
          ? h(
              'tr',
              { role: 'row' },
              h('td', { role: 'cell', colspan: headers.length, class: 'empty' }, empty),
            )
          : rows.map((cells) =>
              h(
                'tr',
                { role: 'row' },
                cells.map((cell, column) =>
                  h(
                    'td',
                    { role: 'cell', 'data-label': headers[column] },
                    h('div', { class: 'cell-value' }, cell),
                  ),
                ),
              ),
            ),
      ),
    ),
  );
}

/**
 * A caption and its control kept together: in a toolbar that wraps, the pair moves to the next line
 * as one, so a caption never ends a line whose control starts the next.
 */
export function labelled(id: string, caption: string, control: HTMLElement): HTMLElement {
  return h('span', { class: 'field' }, h('label', { for: id }, caption), control);
}

/** Characters of a long id a phone shows: enough to tell a page's ids apart (a UUID's first group). */
const SHORT_ID_LENGTH = 8;

/**
 * A long id (a batch's UUID), linked to `href` when given: whole on a wide screen; on a phone its
 * first characters, with a button that shows the whole id. Screen readers always read the whole id
 * (the short form is hidden from them, the whole one only visually), so the link's name is the id.
 */
export function longId(id: string, href?: string): HTMLElement {
  const shown = (...text: Child[]) =>
    href ? h('a', { href, class: 'mono' }, text) : h('span', { class: 'mono' }, text);
  if (id.length <= SHORT_ID_LENGTH + 1) return h('span', { class: 'long-id' }, shown(id));
  const wrapper = h(
    'span',
    { class: 'long-id' },
    // The short form first: a tap or a click aimed at the link's first box lands on what is shown.
    shown(
      h('span', { class: 'long-id-short', 'aria-hidden': 'true' }, `${id.slice(0, SHORT_ID_LENGTH)}…`),
      h('span', { class: 'long-id-whole' }, id),
    ),
    ' ',
  );
  // The button's name is its visible text (WCAG 2.5.3); aria-expanded says whether the id shows.
  const toggle = h(
    'button',
    {
      type: 'button',
      class: 'long-id-toggle',
      'aria-expanded': 'false',
      onclick: () => toggle.setAttribute('aria-expanded', String(wrapper.classList.toggle('expanded'))),
    },
    'whole id',
  );
  wrapper.append(toggle);
  return wrapper;
}

/** A labelled progress bar of `done` out of `total` (100 % when `finished`). */
export function progressBar(label: string, done: number, total: number, finished: boolean): HTMLElement {
  const percent = finished ? 100 : total === 0 ? 0 : Math.floor((done / total) * 100);
  return h(
    'span',
    { class: 'progress' },
    h('progress', { max: 100, value: percent, 'aria-label': label }),
    h('span', { class: 'progress-text' }, `${percent}%`),
  );
}

/** A date as the user's locale shows it, with the ISO text in `title`; '—' for none. */
export function time(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return '—';
  return h('time', { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

/** Opens a download of `blob` named `filename` (a link to an object URL, clicked, then released). */
export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: filename, class: 'visually-hidden' }, filename);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
