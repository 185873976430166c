import { call, errorText, getJson } from '../api.ts';
import type { Product } from '../api-types.ts';
import { h, replace, table, time, type Child } from '../dom.ts';
import { hasScope, missingScopeNote, SCOPES } from '../scopes.ts';
import type { View } from '../view.ts';
import { productHistory } from './product-history.ts';

type Variant = Product['variants'][number];

/** A text field's value, or '—' when it holds nothing to show. */
const text = (value: string): string => (value === '' ? '—' : value);

/**
 * The variant's page as a link that opens apart from the dashboard. Only `http(s):` becomes a link
 * (the service accepts only `https:`; this keeps any other scheme from ever being followed).
 */
function pageLink(url: string): Child {
  const scheme = URL.canParse(url) ? new URL(url).protocol : '';
  if (scheme !== 'https:' && scheme !== 'http:') return url;
  return h('a', { href: url, rel: 'noopener noreferrer', target: '_blank', class: 'url' }, url);
}

/** The variant's images as thumbnails, each captioned with its angle. */
function thumbnails(variant: Variant): Child {
  if (variant.images.length === 0) return '—';
  return h(
    'ul',
    { class: 'thumbs' },
    variant.images.map((image, index) => {
      const angle = image.angle === null ? 'no angle' : `${image.angle}°`;
      return h(
        'li',
        {},
        h(
          'figure',
          {},
          h('img', {
            src: image.url,
            alt: `${variant.name}, image ${index + 1}, ${angle}`,
            loading: 'lazy',
            referrerpolicy: 'no-referrer',
            width: 64,
            height: 64,
          }),
          h('figcaption', {}, angle),
        ),
      );
    }),
  );
}

/** The product's own fields as a list of facts. */
function productFacts(product: Product): HTMLElement {
  const fact = (term: string, value: Child) => [h('dt', {}, term), h('dd', {}, value)];
  return h(
    'dl',
    { class: 'facts' },
    fact('External id', h('span', { class: 'mono' }, product.external_id)),
    fact('Name', text(product.name)),
    fact('Description', text(product.description)),
    fact('Type', product.type),
    fact('Sub-type', product.sub_type),
    fact('Style', product.style),
    fact('Created', time(product.created_at)),
    fact('Updated', time(product.updated_at)),
  );
}

/**
 * One product with every stored field, its variants (dimensions, weight, price, brand, page, images
 * with their angles) and its history; deletes (docs/reference.md §10.5) after confirmation. The spec states
 * no units for the measures nor a currency for the price: they are shown as stored, and say so.
 */
export const productView: View = (main, { id }) => {
  const path = `/products/${encodeURIComponent(id)}`;
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status' });
  const body = h('div');
  const history = productHistory(id);
  // Deleting needs catalog:write: without it no Delete button is drawn, and a line says why.
  const mayDelete = hasScope(SCOPES.catalogWrite);

  async function remove(what: string, target: string, after: () => void) {
    if (!window.confirm(`Delete ${what}? This cannot be undone.`)) return;
    try {
      await call(target, { method: 'DELETE' });
      status.textContent = `Deleted ${what}.`;
      message.textContent = '';
      after();
    } catch (error) {
      message.textContent = errorText(error);
    }
  }

  function variantRow(product: Product, variant: Variant): Child[] {
    const cells: Child[] = [
      h('span', { class: 'mono' }, variant.sku),
      text(variant.name),
      variant.color,
      text(variant.brand),
      String(variant.price),
      `${variant.depth} × ${variant.width} × ${variant.height}`,
      String(variant.weight),
      pageLink(variant.item_url),
      thumbnails(variant),
    ];
    if (!mayDelete) return cells;
    const lastOne = product.variants.length === 1;
    return [
      ...cells,
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          'aria-label': `Delete variant ${variant.sku}`,
          disabled: lastOne,
          title: lastOne ? 'A product keeps at least one variant' : null,
          onclick: () =>
            void remove(
              `variant ${variant.sku}`,
              `${path}/variants/${encodeURIComponent(variant.sku)}`,
              () => void Promise.all([load(), history.reload()]),
            ),
        },
        'Delete',
      ),
    ];
  }

  async function load() {
    let product: Product;
    try {
      product = await getJson<Product>(path);
    } catch (error) {
      message.textContent = errorText(error);
      return;
    }
    replace(
      body,
      productFacts(product),
      mayDelete
        ? h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: () =>
                void remove(`product ${product.external_id}`, path, () => (location.hash = '#/catalog')),
            },
            'Delete product',
          )
        : missingScopeNote(SCOPES.catalogWrite, 'to delete products or variants'),
      h('h2', {}, `Variants (${product.variants.length})`),
      h(
        'p',
        { class: 'help' },
        'Measures and prices as stored: the catalog’s specification states no units and no currency.',
      ),
      table(
        'Variants',
        [
          'SKU',
          'Name',
          'Colour',
          'Brand',
          'Price',
          'Depth × width × height',
          'Weight',
          'Product page',
          'Images',
          ...(mayDelete ? ['Actions'] : []),
        ],
        product.variants.map((variant) => variantRow(product, variant)),
      ),
    );
  }

  main.append(
    h('h1', {}, 'Product ', h('span', { class: 'mono' }, id)),
    h('p', {}, h('a', { href: '#/catalog' }, '← Catalog')),
    message,
    status,
    body,
    history.element,
  );
  void load();
};
