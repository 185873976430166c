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

/** An item that fails validation with exactly one error: `required` on `name`. */
export function withoutName(): Record<string, unknown> {
  const { name: _name, ...rest } = product();
  return rest;
}

/** A valid item whose only variant reuses `sku`, which another product owns: `sku_conflict`. */
export const thief = (sku: string) => product({ variants: [variant({ sku })] });

/** The sku of an item's first variant. */
export const skuOf = (item: Record<string, unknown>) =>
  (item.variants as Array<Record<string, unknown>>)[0]!.sku as string;

/** Error records reduced to what the contract fixes: index, keys, and each error's field and code. */
export const errorShapes = (records: Array<Record<string, unknown>>) =>
  records.map((record) => ({
    index: record.index,
    external_id: record.external_id,
    sku: record.sku,
    errors: (record.errors as Array<Record<string, unknown>>).map(({ field, code }) => ({ field, code })),
  }));

/** A well-formed `{"items":["aaa…"]}` body 1 KiB over the default MAX_BODY_BYTES (64 MiB). */
export function bodyOverLimit(): Buffer {
  const size = 64 * 1024 * 1024 + 1024;
  const body = Buffer.alloc(size, 'a');
  const suffix = Buffer.from('"]}');
  Buffer.from('{"items":["').copy(body, 0);
  suffix.copy(body, size - suffix.length);
  return body;
}
