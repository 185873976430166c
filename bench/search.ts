import { FURNITURE_SUB_TYPES } from '../src/catalog/enums.ts';
import { percentile } from './http-client.ts';
import { withStoredCatalog } from './stored-catalog.ts';

/** The search bench's figures: latencies of each kind of query and of all of them. */
export interface SearchBenchResult {
  database: 'server' | 'embedded';
  storedProducts: number;
  kinds: Array<{
    kind: string;
    example: string;
    searches: number;
    medianTotal: number;
    p50: number;
    p95: number;
  }>;
  all: { searches: number; p50: number; p95: number; max: number };
}

const WORDS = ['oak', 'linen', 'velvet', 'walnut', 'rattan', 'boucle', 'marble', 'teak', 'brass', 'wool'];

/**
 * The kinds of `q` a person types, on the generated catalog (bench/catalog-generator.ts: names
 * "<Word> <sub_type> 0", brands "Brand <n % 97>", ids "x-p<n>", skus "x-p<n>-v<k>"), each a
 * function of a counter so every search differs.
 */
const KINDS: Array<{ kind: string; q: (i: number, total: number) => string }> = [
  { kind: 'an id or sku (one product)', q: (i, total) => `x-p${(i * 7919) % total}-v1` },
  {
    kind: 'a word and a prefix',
    q: (i) => `${WORDS[i % 10]} ${FURNITURE_SUB_TYPES[i % FURNITURE_SUB_TYPES.length]!.slice(0, 3)}`,
  },
  { kind: 'a brand (about 1,000 matches)', q: (i) => `brand ${i % 97}` },
  { kind: 'one common word (about 10,000 matches)', q: (i) => WORDS[i % 10]! },
];

/**
 * `GET /products?q=` on a stored catalog of `batches` × 1000 products (CONTRACT §11.7: p95 ≤ 50 ms
 * on 100,000 products on a server): `searches` of each kind one after another, each a first page
 * of 20 with its total.
 */
export async function benchSearch(options: {
  databaseUrl: string | undefined;
  batches: number;
  searches: number;
  serviceNodeArgs?: readonly string[];
  log: (line: string) => void;
}): Promise<SearchBenchResult> {
  return withStoredCatalog({ name: 'search', ...options }, async ({ database, products: total, client }) => {
    // A few searches first, so the figures are of a warm service and cache.
    for (let i = 0; i < 10; i++) await client.search(`q=${encodeURIComponent(KINDS[i % 4]!.q(i, total))}`);
    const kinds: SearchBenchResult['kinds'] = [];
    const every: number[] = [];
    for (const { kind, q } of KINDS) {
      const ms: number[] = [];
      const totals: number[] = [];
      for (let i = 0; i < options.searches; i++) {
        const answer = await client.search(`limit=20&q=${encodeURIComponent(q(i, total))}`);
        ms.push(answer.ms);
        totals.push(answer.total);
      }
      every.push(...ms);
      kinds.push({
        kind,
        example: q(1, total),
        searches: ms.length,
        medianTotal: percentile(totals, 50),
        p50: percentile(ms, 50),
        p95: percentile(ms, 95),
      });
    }
    return {
      database,
      storedProducts: total,
      kinds,
      all: {
        searches: every.length,
        p50: percentile(every, 50),
        p95: percentile(every, 95),
        max: Math.max(...every),
      },
    };
  });
}
