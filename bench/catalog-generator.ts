import {
  FURNITURE_COLORS,
  FURNITURE_STYLES,
  FURNITURE_SUB_TYPES,
  FURNITURE_TYPES,
} from '../src/catalog/enums.ts';

/** A deterministic pseudo-random generator (mulberry32), so runs compare like with like. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(list: readonly T[], n: number): T => list[n % list.length]!;

const WORDS = ['oak', 'linen', 'velvet', 'walnut', 'rattan', 'boucle', 'marble', 'teak', 'brass', 'wool'];

/**
 * Products in a generated batch unless told otherwise: a full one, the most a submission takes
 * (docs/reference.md §4).
 */
export const BATCH = 1000;

/**
 * One realistic batch: `size` products × 3 variants × 3 images, every enumeration value in use
 * across a batch, about 2 MB of JSON for 1000 products. `generation` changes prices and names, so
 * the same keys can be sent again as an update.
 */
export function generateBatch(
  prefix: string,
  batchNo: number,
  { size = BATCH, generation = 0 }: { size?: number; generation?: number } = {},
): unknown[] {
  const rnd = random(batchNo * 7919 + generation * 104_729 + 1);
  const items: unknown[] = [];
  for (let i = 0; i < size; i++) {
    const n = batchNo * size + i;
    const word = pick(WORDS, n);
    const description =
      `A ${word} piece from the ${pick(FURNITURE_STYLES, n)} range. `.repeat(6) + `Generation ${generation}.`;
    items.push({
      external_id: `${prefix}-p${n}`,
      name: `${word[0]!.toUpperCase()}${word.slice(1)} ${pick(FURNITURE_SUB_TYPES, n)} ${generation}`,
      description,
      style: pick(FURNITURE_STYLES, n),
      type: pick(FURNITURE_TYPES, n),
      sub_type: pick(FURNITURE_SUB_TYPES, n),
      variants: [0, 1, 2].map((v) => ({
        sku: `${prefix}-p${n}-v${v}`,
        name: `${pick(FURNITURE_COLORS, n + v)} finish`,
        item_url: `https://shop.example.com/products/${prefix}-p${n}?variant=${v}`,
        depth: Math.round(rnd() * 2000) / 10,
        height: Math.round(rnd() * 2000) / 10,
        width: Math.round(rnd() * 3000) / 10,
        weight: Math.round(rnd() * 1500) / 10,
        color: pick(FURNITURE_COLORS, n + v),
        price: Math.round(rnd() * 500_000) / 100 + generation,
        brand: `Brand ${n % 97}`,
        images: [0, 1, 2].map((k) => ({
          url: `https://cdn.example.com/img/${prefix}/p${n}/v${v}/${k}.jpg`,
          angle: k === 2 ? null : (k * 45 + v * 15) % 360,
        })),
      })),
    });
  }
  return items;
}
