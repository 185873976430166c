import { errorText, fieldErrorTexts, getJson, type Page, query } from '../api.ts';
import type { Product } from '../api-types.ts';
import { h, replace, table, time } from '../dom.ts';
import { replaceHashQuery } from '../hash-query.ts';
import { debounce, isAbort, latestRequest } from '../live-search.ts';
import type { View } from '../view.ts';
import { cursorPager } from '../pager.ts';
import { catalogDownloads } from './catalog-downloads.ts';
import { searchForm } from './catalog-search-form.ts';

const PAGE_SIZE = 50;
/** How long typing must pause before the search is sent. */
const TYPING_PAUSE_MS = 250;

/** A page of `GET /products`: with `q` or a filter it carries `total`, the matches over all pages. */
type ProductPage = Page<Product> & { total?: number };

/** The variants' prices as one text: `120` or `99.5–120`. */
function priceRange(product: Product): string {
  const prices = product.variants.map((variant) => variant.price);
  const [low, high] = [Math.min(...prices), Math.max(...prices)];
  return low === high ? String(low) : `${low}–${high}`;
}

/**
 * The stored catalog: by external_id with no search, or the products matching the words and filters
 * (docs/reference.md §11.7), most relevant first, with their total; a page at a time either way. The search
 * runs as the user types, and what it asks (with the page's cursor) is kept in the address.
 */
export const catalogView: View = (main, { query: params }) => {
  const message = h('div', { class: 'error', role: 'alert', id: 'catalog-message' });
  const total = h('p', { class: 'total', role: 'status', 'data-testid': 'total' });
  const body = h('div');
  const requests = latestRequest();
  const form = searchForm(params, { onTyping: () => typing.schedule(), onChange: () => typing.now() });
  /** What the list shows: taken from the form when a search starts, so a page turn asks for the same. */
  let criteria = form.criteria();
  const typing = debounce(() => {
    criteria = form.criteria();
    void pager.first();
  }, TYPING_PAUSE_MS);

  function render(products: Product[], searching: boolean) {
    replace(
      body,
      table(
        searching ? 'Products matching the search, most relevant first' : 'Products by external id',
        ['External id', 'Name', 'Type', 'Style', 'Price', 'Variants', 'Updated'],
        products.map((product) => [
          h('a', { href: `#/products/${encodeURIComponent(product.external_id)}` }, product.external_id),
          product.name,
          product.type,
          product.style,
          priceRange(product),
          product.variants.length,
          time(product.updated_at),
        ]),
        searching ? 'No product matches the search.' : 'No products.',
      ),
    );
  }

  async function browse(cursor: string | null): Promise<string | null | undefined> {
    const searching = Object.values(criteria).some((value) => value !== '');
    replaceHashQuery({ ...criteria, cursor });
    const turn = requests.start();
    let page: ProductPage;
    try {
      page = await getJson<ProductPage>(`/products${query({ limit: PAGE_SIZE, cursor, ...criteria })}`, {
        signal: turn.signal,
      });
    } catch (error) {
      if (isAbort(error) || !turn.isLatest()) return undefined;
      // An invalid filter: the service's 400 names the parameter; no stale results beside it.
      const named = fieldErrorTexts(error);
      replace(
        message,
        h('p', {}, errorText(error)),
        named.length
          ? h(
              'ul',
              {},
              named.map((text) => h('li', {}, text)),
            )
          : null,
      );
      total.textContent = '';
      replace(body);
      pager.element.hidden = true;
      return undefined;
    }
    if (!turn.isLatest()) return undefined;
    replace(message);
    total.textContent =
      page.total === undefined
        ? 'All products, by external id'
        : `${page.total.toLocaleString()} ${page.total === 1 ? 'product' : 'products'}`;
    render(page.data, searching);
    pager.element.hidden = false;
    return page.next_cursor;
  }
  const pager = cursorPager(browse);

  main.append(h('h1', {}, 'Catalog'), form.element, message, catalogDownloads(), total, body, pager.element);
  void pager.restore(params.get('cursor'));
  return () => typing.cancel();
};
