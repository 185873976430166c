import { FURNITURE_COLORS, FURNITURE_STYLES } from '../src/catalog/enums.ts';

/** A seeded pseudo-random source (mulberry32), so a seed replays the same workload and faults. */
export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  pick<T>(values: readonly T[]): T;
  chance(p: number): boolean;
}

/** A seeded {@link Random}. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  return {
    next,
    int,
    pick: (values) => values[int(0, values.length - 1)]!,
    chance: (p) => next() < p,
  };
}

/**
 * Products per tenant. Every tenant uses the same external ids and skus (`p-7`, `p-7-v1`), so a
 * catalog read that crossed tenants would show another tenant's values, which the final comparison
 * with each tenant's own model catches; few of them, so batches keep patching the same products.
 */
const PRODUCTS = 24;
const VARIANTS_PER_PRODUCT = 3;
const IMAGES_PER_VARIANT = 6;

/** The external id of product `n`. */
export const externalIdOf = (n: number) => `p-${n}`;

function image(random: Random, id: string, v: number): Record<string, unknown> {
  const url = `https://cdn.example/${id}/v${v}/${random.int(0, IMAGES_PER_VARIANT - 1)}.jpg`;
  // Angle absent (keeps a stored one), null (clears it) or a value, edges included.
  const roll = random.next();
  if (roll < 0.3) return { url };
  if (roll < 0.5) return { url, angle: null };
  return { url, angle: random.pick([0, 45, 90, 180, 270.5, 360]) };
}

function variant(
  random: Random,
  tenant: string,
  id: string,
  sku: string,
  v: number,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    sku,
    name: `${tenant} ${sku} ${random.pick(['oak', 'walnut', 'ash'])}`,
    item_url: `https://shop.example/${tenant}/${sku}`,
    depth: random.int(20, 120),
    height: random.int(20, 120),
    width: random.pick([50, 80.5, 214]),
    weight: random.int(1, 90) / 2,
    color: random.pick(FURNITURE_COLORS),
    price: random.pick([0, 99.99, 249, 1299.99, random.int(1, 500000) / 100]),
    brand: random.pick(['Northwind', 'Fabrikam', '']),
  };
  // Images absent keep the stored ones; present, they merge by url (new urls appended).
  if (random.chance(0.7)) {
    const count = random.int(1, 3);
    const images = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < count; i++) {
      const next = image(random, id, v);
      images.set(next.url as string, next);
    }
    fields.images = [...images.values()];
  }
  return fields;
}

/** A valid item for product `n`: new or a PATCH of it, with 1–3 of its own variants. */
function validItem(random: Random, tenant: string, n: number): Record<string, unknown> {
  const id = externalIdOf(n);
  const first = random.int(0, VARIANTS_PER_PRODUCT - 1);
  const count = random.int(1, VARIANTS_PER_PRODUCT - first);
  const variants = Array.from({ length: count }, (_, k) =>
    variant(random, tenant, id, `${id}-v${first + k}`, first + k),
  );
  return {
    external_id: id,
    name: `${tenant} product ${n} ${random.pick(['mk1', 'mk2', 'mk3'])}`,
    description: random.pick(['', 'Solid wood', 'Hand finished']),
    style: random.pick(FURNITURE_STYLES),
    type: 'Chairs',
    sub_type: 'Armchair',
    variants,
  };
}

/** An item that takes a sku of product `n` for another product: `sku_conflict` once `n` owns it. */
function thiefItem(random: Random, tenant: string, n: number): Record<string, unknown> {
  const other = (n + random.int(1, PRODUCTS - 1)) % PRODUCTS;
  const item = validItem(random, tenant, other);
  const victim = externalIdOf(n);
  item.variants = [variant(random, tenant, victim, `${victim}-v${random.int(0, 1)}`, 0)];
  return item;
}

/** Invalid items, each with known defects (the model's validator names them). */
function invalidItem(random: Random, tenant: string, n: number): unknown {
  const item = validItem(random, tenant, n);
  const first = (item.variants as Array<Record<string, unknown>>)[0]!;
  switch (random.int(0, 7)) {
    case 0:
      delete item.name;
      return item;
    case 1:
      return { ...item, style: 'modern' };
    case 2:
      first.item_url = 'http://shop.example/plain';
      return item;
    case 3:
      first.images = [{ url: 'https://cdn.example/x.jpg', angle: 400 }];
      return item;
    case 4:
      first.images = [];
      return item;
    case 5:
      return { ...item, variants: [first, { ...first }] };
    case 6:
      return random.pick(['just a string', 42, null, ['array']]);
    default:
      return { ...item, colour: 'Red', variants: [{ ...first, price: -1 }] };
  }
}

/**
 * A batch of 1–`maxItems` items for `tenant`: new products and PATCHes, repeated external ids and
 * skus within the batch, skus taken from other products, and invalid items.
 */
export function makeBatch(random: Random, tenant: string, maxItems: number): unknown[] {
  const size = random.int(1, maxItems);
  const items: unknown[] = [];
  for (let i = 0; i < size; i++) {
    const n = random.int(0, PRODUCTS - 1);
    const roll = random.next();
    if (roll < 0.12) items.push(invalidItem(random, tenant, n));
    else if (roll < 0.22) items.push(thiefItem(random, tenant, n));
    else if (roll < 0.3 && items.length > 0) items.push(structuredClone(random.pick(items)));
    else items.push(validItem(random, tenant, n));
  }
  return items;
}
