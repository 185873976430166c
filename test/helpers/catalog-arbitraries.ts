import type { TestContext } from 'node:test';
import fc from 'fast-check';
import {
  FURNITURE_COLORS,
  FURNITURE_STYLES,
  FURNITURE_SUB_TYPES,
  FURNITURE_TYPES,
} from '../../src/catalog/enums.ts';
import { MAX_IMAGES_PER_VARIANT, MAX_KEY_LENGTH } from '../../src/catalog/product-schema.ts';

/** fast-check arbitraries for batch items, built from the item schema's enums and limits. */

type Json = Record<string, unknown>;

/**
 * fast-check settings for one property: `numRuns` as given (or `PROPERTY_RUNS`), the seed from
 * `PROPERTY_SEED` or a new one, printed as a diagnostic so any run can be repeated. A property is
 * stopped after `timeLimitMs` (shrinking a failure through the API can take minutes), which counts
 * as a failure, reported with the smallest counterexample found by then.
 */
export function propertyRuns(
  t: TestContext,
  numRuns: number,
  timeLimitMs = 120_000,
): { seed: number; numRuns: number; interruptAfterTimeLimit: number; markInterruptAsFailure: boolean } {
  const seed = process.env.PROPERTY_SEED
    ? Number(process.env.PROPERTY_SEED)
    : Date.now() ^ (Math.random() * 2 ** 31);
  const runs = process.env.PROPERTY_RUNS ? Number(process.env.PROPERTY_RUNS) : numRuns;
  t.diagnostic(`fast-check seed=${seed} numRuns=${runs} (repeat: PROPERTY_SEED=${seed})`);
  return { seed, numRuns: runs, interruptAfterTimeLimit: timeLimitMs, markInterruptAsFailure: true };
}

/** Text PostgreSQL can store (no U+0000, no lone surrogate), any Unicode otherwise. */
const text = (maxLength = 12) =>
  fc.string({ unit: 'binary', maxLength }).filter((value) => !value.includes('\u0000'));

/** A key (`external_id`, `sku`): 1–255 characters, not blank; often short and plain. */
export const keyArb = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9-]{1,16}$/) },
  { weight: 1, arbitrary: text(MAX_KEY_LENGTH).filter((value) => value.length > 0 && /\S/.test(value)) },
);

/** A finite number ≥ 0 (a measure or a price). */
const measureArb = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }),
  fc.double({ min: 0, max: Number.MAX_VALUE, noNaN: true, noDefaultInfinity: true }),
);

/** An absolute https URL with a host. */
export const httpsUrlArb = fc.webUrl({
  validSchemes: ['https'],
  withQueryParameters: true,
  withFragments: true,
});

/** An image: `angle` absent, null or 0–360. */
export const imageArb = (url: fc.Arbitrary<string> = httpsUrlArb) =>
  fc.record(
    { url, angle: fc.oneof(fc.constant(null), fc.double({ min: 0, max: 360, noNaN: true })) },
    { requiredKeys: ['url'] },
  );

/** The fields every variant must carry, for the `requiredKeys` of the variant arbitraries. */
export const VARIANT_KEYS_REQUIRED = [
  'sku',
  'name',
  'item_url',
  'depth',
  'height',
  'width',
  'weight',
  'color',
  'price',
  'brand',
] as const;

/** A valid variant with sku `sku`; `images` absent or 1–10 with distinct urls. */
export const variantArb = (sku: fc.Arbitrary<string> = keyArb, url: fc.Arbitrary<string> = httpsUrlArb) =>
  fc.record(
    {
      sku,
      name: text(),
      item_url: httpsUrlArb,
      depth: measureArb,
      height: measureArb,
      width: measureArb,
      weight: measureArb,
      color: fc.constantFrom(...FURNITURE_COLORS),
      price: measureArb,
      brand: text(),
      images: fc.uniqueArray(imageArb(url), {
        minLength: 1,
        maxLength: MAX_IMAGES_PER_VARIANT,
        selector: (image) => image.url,
      }),
    },
    {
      requiredKeys: [...VARIANT_KEYS_REQUIRED],
    },
  );

/** A valid item: 1–`maxVariants` variants with distinct skus. */
export const itemArb = (
  options: {
    externalId?: fc.Arbitrary<string>;
    sku?: fc.Arbitrary<string>;
    url?: fc.Arbitrary<string>;
    maxVariants?: number;
  } = {},
): fc.Arbitrary<Json> =>
  fc.record({
    external_id: options.externalId ?? keyArb,
    name: text(),
    description: text(40),
    style: fc.constantFrom(...FURNITURE_STYLES),
    type: fc.constantFrom(...FURNITURE_TYPES),
    sub_type: fc.constantFrom(...FURNITURE_SUB_TYPES),
    variants: fc.uniqueArray(variantArb(options.sku, options.url), {
      minLength: 1,
      maxLength: options.maxVariants ?? 3,
      selector: (variant) => variant.sku,
    }),
  });

/** Every path into a JSON value, as arrays of keys and indices (the root is `[]`). */
function pathsOf(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const paths = [prefix];
  if (Array.isArray(value)) value.forEach((entry, i) => paths.push(...pathsOf(entry, [...prefix, i])));
  else if (value !== null && typeof value === 'object') {
    for (const [key, entry] of Object.entries(value)) paths.push(...pathsOf(entry, [...prefix, key]));
  }
  return paths;
}

/**
 * What a mutation does at a path: put another value there, delete it, add an unknown key to the
 * object there, or repeat the array element there `times` more (a repeated sku or url, too many images).
 */
type Mutation =
  | { kind: 'replace'; value: unknown }
  | { kind: 'delete' }
  | { kind: 'add'; key: string; value: unknown }
  | { kind: 'repeat'; times: number };

/** Values near the schema's edges: blank keys, other schemes, out-of-range numbers, unstorable text. */
const edgeValueArb = fc.constantFrom<unknown>(
  '',
  ' \t',
  'x'.repeat(MAX_KEY_LENGTH + 1),
  'http://cdn.example/a.jpg',
  'ftp://cdn.example/a.jpg',
  'https://',
  'https://cdn.example/a b.jpg',
  'not a url',
  'modern',
  'Modern ',
  '\u0000',
  '\ud800',
  -1,
  -0.001,
  360.5,
  1e308,
  [],
  {},
  null,
  true,
);

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant('replace' as const), value: edgeValueArb }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('replace' as const), value: fc.jsonValue({ maxDepth: 2 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      key: fc.string({ maxLength: 6 }),
      value: fc.jsonValue({ maxDepth: 1 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('repeat' as const), times: fc.integer({ min: 1, max: 10 }) }),
  },
);

/** Applies `mutation` to a copy of `item` at the path picked by `choice` (modulo the number of paths). */
function mutate(item: unknown, choice: number, mutation: Mutation): unknown {
  const copy = structuredClone(item);
  const paths = pathsOf(copy);
  const path = paths[choice % paths.length]!;
  if (path.length === 0) {
    if (mutation.kind === 'replace') return mutation.value;
    if (mutation.kind === 'add' && copy !== null && typeof copy === 'object' && !Array.isArray(copy)) {
      Object.defineProperty(copy, mutation.key, {
        value: mutation.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy;
  }
  let parent = copy as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
  const last = path[path.length - 1]!;
  if (mutation.kind === 'replace') parent[last] = mutation.value;
  else if (mutation.kind === 'repeat') {
    if (Array.isArray(parent)) {
      for (let n = 0; n < mutation.times; n++) parent.push(structuredClone(parent[Number(last)]));
    }
  } else if (mutation.kind === 'delete') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else {
    const target = parent[last];
    if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
      Object.defineProperty(target, mutation.key, {
        value: mutation.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return copy;
}

/** A valid item with 1–3 random mutations: mostly invalid, in every way the schema can be broken. */
export const brokenItemArb = (valid: fc.Arbitrary<Json> = itemArb()): fc.Arbitrary<unknown> =>
  fc
    .tuple(
      valid,
      fc.array(fc.tuple(fc.noBias(fc.nat(1_000_000)), mutationArb), {
        minLength: 1,
        maxLength: 3,
      }),
    )
    .map(([item, mutations]) =>
      mutations.reduce<unknown>((current, [choice, mutation]) => mutate(current, choice, mutation), item),
    );

/** Any JSON value as an item: random JSON, a valid item, or a broken one. */
export const anyItemArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: itemArb() },
  { weight: 4, arbitrary: brokenItemArb() },
);
