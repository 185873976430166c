import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Database } from '../db/database.ts';
import { applyItem } from '../catalog/catalog-replay.ts';
import { findCatalogRows, type CatalogKeys, type CatalogRows } from '../catalog/catalog-state.repository.ts';
import { leadingZeroWarnings } from '../catalog/sku-lookalikes.ts';
import { itemKeys } from '../validation/item-errors.ts';
import { createItemValidator, type ItemValidator } from '../validation/item-validator.ts';
import type { Admission, RateLimiter } from './rate-limiter.ts';
import type { PreviewEntry, PreviewResult } from './preview.schemas.ts';

/** A dry run of a submission; knows nothing of HTTP. */
export interface PreviewService {
  /** Counts a preview against the tenant's submission rate (not its backlog: it adds none); throws 429. */
  admit(tenantId: string): Promise<Admission>;
  /**
   * What processing `body` (a submission's JSON, envelope already checked) would do to the catalog
   * as stored now. Reads the catalog, writes nothing.
   */
  preview(tenantId: string, body: Uint8Array): Promise<PreviewResult>;
}

/**
 * Creates the preview service. It judges items with the worker's validator and applies them as the
 * worker does when it records history (`applyItem`: the worker's merge, one item at a time on a
 * copy of the stored rows they name), so each item's diff is the one its history entry would hold.
 */
export function createPreviewService(deps: {
  db: Pick<Database, 'query' | 'kind'>;
  rateLimiter: RateLimiter;
  validateItem?: ItemValidator;
}): PreviewService {
  const { db } = deps;
  const validateItem = deps.validateItem ?? createItemValidator();

  return {
    admit: (tenantId) => deps.rateLimiter.admit(tenantId, { backlog: false }),

    async preview(tenantId, body) {
      // Parsed as the worker parses the stored body (batch-progress.repository `readItems`).
      // A view of the bytes, not the copy `Buffer.from(bytes)` would make of up to megabytes first.
      const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
      const { items } = JSON.parse(text) as { items: unknown[] };
      // The stored rows are read while the items are validated, so by every key the body names, valid
      // item or not: a valid item's keys are among them, and rows read for an invalid one are never
      // looked at. The pool hands out its connection on a later tick, so one turn of the event loop
      // sends the statement before validation takes the thread; on a server it then runs meanwhile
      // (docs/performance.md, preview). Should validation throw, the read's failure is handled here.
      const reading = findCatalogRows(db, tenantId, keysNamedBy(items));
      reading.catch(() => undefined);
      await yieldToEventLoop();
      const verdicts = items.map((item) => validateItem(item));
      const catalog = await reading;
      // The products' skus as stored, before the items are applied to `catalog`.
      const storedSkus = skusByProduct(catalog);
      const data = verdicts.map((verdict, index): PreviewEntry => {
        const judged = verdict.ok ? applyItem(catalog, index, verdict.item) : verdict;
        const { external_id } = itemKeys(items[index], 'errors' in judged ? judged.errors : []);
        if (!judged.ok)
          return { index, external_id, action: 'invalid', changes: [], diff: [], errors: judged.errors };
        const { action, diff } = judged;
        return { index, external_id, action, changes: diff.map(({ path }) => path), diff, errors: [] };
      });
      addLeadingZeroWarnings(storedSkus, data, verdicts);
      const summary = { create: 0, update: 0, unchanged: 0, invalid: 0 };
      for (const entry of data) summary[entry.action] += 1;
      return { received_count: items.length, summary, data };
    },
  };
}

/**
 * Adds `warnings` to the entries of items that would add a variant beside a sku of the same product
 * that differs only by leading zeros (docs/spreadsheets.md, "Leading zeros"). The product's skus are
 * those stored now and those the body's earlier valid items give it, as processing would have them.
 */
function addLeadingZeroWarnings(
  skus: Map<string, Set<string>>,
  data: PreviewEntry[],
  verdicts: ReadonlyArray<ReturnType<ItemValidator>>,
): void {
  data.forEach((entry, index) => {
    const verdict = verdicts[index];
    if (entry.action === 'invalid' || !verdict?.ok) return;
    const { external_id, variants } = verdict.item;
    const productSkus = skus.get(external_id) ?? new Set<string>();
    skus.set(external_id, productSkus);
    const added =
      entry.action === 'create'
        ? variants.map(({ sku }, v) => ({ index: v, sku }))
        : entry.diff
            .filter(isAddedVariant)
            .map(({ path, sku }) => ({ index: variantIndex(path), sku: sku! }));
    const warnings = leadingZeroWarnings(added, productSkus);
    if (warnings.length > 0) entry.warnings = warnings;
    for (const { sku } of variants) productSkus.add(sku);
  });
}

/**
 * The skus of each product among the stored variants read: those the body names, and the lookalikes
 * the read adds for the warning (the only others that could match).
 */
function skusByProduct(catalog: CatalogRows): Map<string, Set<string>> {
  const skus = new Map<string, Set<string>>();
  for (const { sku, external_id } of catalog.variants.values()) {
    const set = skus.get(external_id);
    if (set === undefined) skus.set(external_id, new Set([sku]));
    else set.add(sku);
  }
  return skus;
}

/** A diff element that adds a whole variant (`variants[1]`), not an image or a field of one. */
const isAddedVariant = (element: PreviewEntry['diff'][number]) =>
  element.op === 'add' && /^variants\[\d+\]$/.test(element.path);

const variantIndex = (path: string) => Number(/\d+/.exec(path)![0]);

/**
 * Every string external_id and sku of a body's items, each once, but those with a NUL: PostgreSQL's
 * text cannot hold one (the statement would fail), so no stored row has such a key, and only an
 * invalid item (the validator refuses unstorable strings) can name one.
 */
function keysNamedBy(items: readonly unknown[]): CatalogKeys {
  const externalIds = new Set<string>();
  const skus = new Set<string>();
  const readable = (key: unknown): key is string => typeof key === 'string' && !key.includes('\u0000');
  // Optional chaining reads a member of anything but null and undefined; other values have none of these.
  for (const item of items as Array<{ external_id?: unknown; variants?: unknown } | null | undefined>) {
    if (readable(item?.external_id)) externalIds.add(item.external_id);
    if (!Array.isArray(item?.variants)) continue;
    for (const variant of item.variants as Array<{ sku?: unknown } | null | undefined>) {
      if (readable(variant?.sku)) skus.add(variant.sku);
    }
  }
  // Every product named may gain a variant whose sku looks like one it has (the warning).
  return { externalIds: [...externalIds], skus: [...skus], lookalikesOf: [...externalIds] };
}
