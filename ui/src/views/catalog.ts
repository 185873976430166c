import { errorText, getJson, type Page, query } from '../api.ts';
import type { Product } from '../api-types.ts';
import { h, replace, table, time } from '../dom.ts';
import type { View } from '../view.ts';
import { cursorPager } from '../pager.ts';

const PAGE_SIZE = 50;

/**
 * The stored catalog by external_id, all of it or the products whose external_id starts with the
 * searched prefix (`GET /products?prefix=`), a page at a time either way.
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

  /** The prefix searched for; empty while the whole catalog is shown. */
  let prefix = prefixInput.value.trim();

  async function browse(cursor: string | null): Promise<string | null | undefined> {
    try {
      const page = await getJson<Page<Product>>(`/products${query({ limit: PAGE_SIZE, cursor, prefix })}`);
      render(
        page.data,
        prefix ? `Products whose external id starts with “${prefix}”` : 'Products by external id',
      );
      message.textContent = '';
      pager.element.hidden = false;
      return page.next_cursor;
    } catch (error) {
      message.textContent = errorText(error);
      return undefined;
    }
  }
  const pager = cursorPager(browse);

  const form = h(
    'form',
    {
      class: 'toolbar',
      role: 'search',
      onsubmit: (event) => {
        event.preventDefault();
        prefix = prefixInput.value.trim();
        void pager.first();
      },
    },
    h('label', { for: 'prefix' }, 'External id starts with'),
    prefixInput,
    h('button', { type: 'submit' }, 'Search'),
  );
  main.append(h('h1', {}, 'Catalog'), form, message, body, pager.element);
  void pager.first();
};
