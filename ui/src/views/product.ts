import { call, errorText, getJson } from '../api.ts';
import type { Product } from '../api-types.ts';
import { h, replace, table, time } from '../dom.ts';
import type { View } from '../view.ts';

/** One product with its variants and image thumbnails; deletes (CONTRACT §10.5) after confirmation. */
export const productView: View = (main, { id }) => {
  const path = `/products/${encodeURIComponent(id)}`;
  const message = h('p', { class: 'error', role: 'alert' });
  const status = h('p', { role: 'status' });
  const body = h('div');

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

  async function load() {
    let product: Product;
    try {
      product = await getJson<Product>(path);
    } catch (error) {
      message.textContent = errorText(error);
      return;
    }
    const fact = (term: string, value: string | null | HTMLElement | string[]) => [
      h('dt', {}, term),
      h('dd', {}, value ?? '—'),
    ];
    replace(
      body,
      h(
        'dl',
        { class: 'facts' },
        fact('Name', product.name),
        fact('Type', `${product.type} / ${product.sub_type}`),
        fact('Style', product.style),
        fact('Description', product.description),
        fact('Created', time(product.created_at)),
        fact('Updated', time(product.updated_at)),
      ),
      h(
        'button',
        {
          type: 'button',
          class: 'danger',
          onclick: () =>
            void remove(`product ${product.external_id}`, path, () => (location.hash = '#/catalog')),
        },
        'Delete product',
      ),
      h('h2', {}, `Variants (${product.variants.length})`),
      table(
        'Variants',
        ['SKU', 'Name', 'Price', 'Color', 'Size (w×d×h)', 'Images', 'Actions'],
        product.variants.map((variant) => [
          h('span', { class: 'mono' }, variant.sku),
          variant.name,
          String(variant.price),
          variant.color,
          `${variant.width}×${variant.depth}×${variant.height}`,
          h(
            'ul',
            { class: 'thumbs' },
            (variant.images ?? []).map((image, index) =>
              h(
                'li',
                {},
                h('img', {
                  src: image.url,
                  alt: `${variant.name}, image ${index + 1}${image.angle === null ? '' : `, ${image.angle}°`}`,
                  loading: 'lazy',
                  referrerpolicy: 'no-referrer',
                  width: 64,
                  height: 64,
                }),
              ),
            ),
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'aria-label': `Delete variant ${variant.sku}`,
              onclick: () =>
                void remove(
                  `variant ${variant.sku}`,
                  `${path}/variants/${encodeURIComponent(variant.sku)}`,
                  () => void load(),
                ),
            },
            'Delete',
          ),
        ]),
      ),
    );
  }

  main.append(
    h('h1', {}, 'Product ', h('span', { class: 'mono' }, id)),
    h('p', {}, h('a', { href: '#/catalog' }, '← Catalog')),
    message,
    status,
    body,
  );
  void load();
};
