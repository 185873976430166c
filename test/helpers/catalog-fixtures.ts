import { randomUUID } from 'node:crypto';

/** A valid FullProductIngest with unique keys; `overrides` replace top-level fields. */
export function product(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const id = randomUUID();
  return {
    external_id: `ext-${id}`,
    name: 'Linen sofa',
    description: 'Three-seat sofa in washed linen',
    style: 'Modern',
    type: 'Sofas & Loveseats',
    sub_type: 'Sofa',
    variants: [variant({ sku: `sku-${id}` })],
    ...overrides,
  };
}

/** A valid ProductVariantIngest; `overrides` replace fields. */
export function variant(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    sku: `sku-${randomUUID()}`,
    name: 'Oat linen',
    item_url: 'https://shop.example/sofa',
    depth: 95.5,
    height: 82,
    width: 214,
    weight: 61.2,
    color: 'Beige',
    price: 1299.99,
    brand: 'Northwind',
    images: [{ url: 'https://cdn.example/sofa-front.jpg', angle: 0 }],
    ...overrides,
  };
}
