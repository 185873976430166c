import { errorText, getJson, type Page, query } from '../api.ts';
import type { Product } from '../api-types.ts';
import { h, replace, table, time } from '../dom.ts';
import type { View } from '../main.ts';
import { cursorPager } from '../pager.ts';

const PAGE_SIZE = 50;
/** API pages read at most per search, so a prefix far down a large catalog cannot run away. */
const MAX_SCAN_PAGES = 40;

/**
 * The stored catalog by external_id, with a prefix search. `GET /products` has no prefix filter, but
 * it is ordered by external_id: the search walks its pages (500 at a time) from the start, keeps the
 * matches and stops at the first id past the prefix.
 */
export const catalogView: View = (main, { query: params }) => {
  const message = h('p', { class: 'error', role: 'alert' });
  const body = h('div', { 'aria-live': 'polite' });
  const prefixInput = h('input', {
    id: 'prefix',
    type: 'search',
    name: 'prefix',
    value: params.get('prefix') ?? '',
    autocomplete: 'off',
  });

  function render(products: Product[], caption: string) {
    replace(
      body,
      table(
        caption,
        ['External id', 'Name', 'Type', 'Variants', 'Updated'],
        products.map((product) => [
          h('a', { href: `#/products/${encodeURIComponent(product.external_id)}` }, product.external_id),
          product.name,
          product.type,
          product.variants.length,
          time(product.updated_at),
        ]),
        'No products.',
      ),
    );
  }

  async function browse(cursor: string | null): Promise<string | null | undefined> {
    try {
      const page = await getJson<Page<Product>>(`/products${query({ limit: PAGE_SIZE, cursor })}`);
      render(page.data, 'Products by external id');
      message.textContent = '';
      pager.element.hidden = false;
      return page.next_cursor;
    } catch (error) {
      message.textContent = errorText(error);
      return undefined;
    }
  }
  const pager = cursorPager(browse);

  async function search(prefix: string) {
    const found: Product[] = [];
    let cursor: string | null = null;
    let pages = 0;
    pager.element.hidden = true;
    try {
      scan: do {
        const page: Page<Product> = await getJson(`/products${query({ limit: 500, cursor })}`);
        for (const product of page.data) {
          if (product.external_id.startsWith(prefix)) found.push(product);
          else if (product.external_id > prefix) break scan;
          if (found.length === PAGE_SIZE) break scan;
        }
        cursor = page.next_cursor;
      } while (cursor !== null && ++pages < MAX_SCAN_PAGES);
      render(found, `Products whose external id starts with “${prefix}”`);
      message.textContent = '';
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  const form = h(
    'form',
    {
      class: 'toolbar',
      role: 'search',
      onsubmit: (event) => {
        event.preventDefault();
        const prefix = prefixInput.value.trim();
        if (prefix) void search(prefix);
        else void pager.first();
      },
    },
    h('label', { for: 'prefix' }, 'External id starts with'),
    prefixInput,
    h('button', { type: 'submit' }, 'Search'),
  );
  main.append(h('h1', {}, 'Catalog'), form, message, body, pager.element);
  const initial = prefixInput.value.trim();
  if (initial) void search(initial);
  else void pager.first();
};
