import type { FieldError, FieldErrorCode } from '../src/validation/item-errors.ts';
import type { FullProductIngest, ProductView } from '../src/catalog/product-schema.ts';
import { createItemValidator, type ItemValidator } from '../src/validation/item-validator.ts';
import { itemKeys } from '../src/validation/item-errors.ts';
import { storable } from '../src/ingestion/batches/batch-progress.repository.ts';

/**
 * An in-memory model of CONTRACT §5 for one tenant: what processing a sequence of batches must do
 * to the catalog, to each batch's counters and to its error records. Tests (property tests, the
 * chaos run) feed it the batches they submit, in submission order, and compare the service's answers
 * with its predictions.
 *
 * Validation is not modelled: the verdict valid/invalid comes from the service's own validator
 * (`src/validation/item-validator.ts`), so the model's subject is the upsert rules — products by
 * `external_id`, variants by `sku`, images by `url`, PATCH semantics, `sku_conflict`, atomic items.
 * It is written independently of the worker's merge (`src/catalog/merge-items.ts`) and its SQL, one
 * item at a time, the simplest reading of the rules.
 *
 * Numbers: the service stores what `JSON.parse` makes of the sent text, as a double (`float8`, and
 * numbers inside the images' `jsonb`), and reads it back as the shortest JSON text of that double.
 * The model keeps each item as `JSON.parse(JSON.stringify(item))` of the parsed item, i.e. the same
 * doubles (`-0` becomes `0`, as `JSON.stringify` writes it), so a read-back parsed with `JSON.parse`
 * deep-equals the model's product.
 */

/** A product in the read shape of CONTRACT §9 (the schema's `ProductView`), without timestamps. */
export type ModelProduct = Omit<ProductView, 'created_at' | 'updated_at'>;
/** A variant as the catalog reads it: the ingest fields and every stored image in merge order. */
export type ModelVariant = ModelProduct['variants'][number];
/** An image as the catalog reads it: `angle` null when none is stored. */
export type ModelImage = ModelVariant['images'][number];

/** An error as the model predicts it: `field` and `code` (messages are the service's own words). */
export interface ModelError {
  field: string;
  code: FieldErrorCode;
}

/**
 * The record an errors page must hold for a failed item (CONTRACT §7), messages left out; keys and
 * fields as stored (U+0000 and lone surrogates read as U+FFFD, README "Decisions where the spec is silent").
 */
export interface ModelFailure {
  index: number;
  external_id: string | null;
  sku: string | null;
  errors: ModelError[];
}

/** The terminal status record of a batch, as far as the model can predict it (no ids, no times). */
export interface ModelCounters {
  status: 'completed' | 'completed_with_errors' | 'failed';
  received_count: number;
  validated_ok: number;
  validated_failed: number;
  upserted: number;
  failed: number;
}

/** What one batch must end with. */
export interface BatchPrediction {
  /** Indices of the items that fail (invalid or `sku_conflict`), ascending. */
  failedIndices: number[];
  /** Items written. */
  upserted: number;
  /** Items that failed at any stage. */
  failed: number;
  /** The whole terminal status record (the counters, and the status they imply). */
  counters: ModelCounters;
  /** The errors page's records, in index order, without messages. */
  failures: ModelFailure[];
}

/** One tenant's catalog as CONTRACT §5 says it must be. */
export interface CatalogModel {
  /**
   * Applies a batch (its items in index order, each atomically) and predicts its outcome. Items are
   * the values a client sends with `JSON.stringify` (see {@link asSent}).
   */
  applyBatch(items: readonly unknown[]): BatchPrediction;
  /** The product stored under `externalId`, in the read shape of §9 (no timestamps), or null. */
  product(externalId: string): ModelProduct | null;
  /** Every stored product, ordered by `external_id` as `GET /products` lists them. */
  products(): ModelProduct[];
  /** The `external_id` of the product that owns `sku`, or null. */
  ownerOf(sku: string): string | null;
}

/** The order `GET /products` lists external ids in: PostgreSQL's "C"-collated text order (by code point). */
export function compareExternalIds(a: string, b: string): number {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return Buffer.compare(left, right);
}

/** Terminal status implied by the counters of a batch (CONTRACT §5). */
function terminalStatus(upserted: number, failed: number): ModelCounters['status'] {
  if (failed === 0) return 'completed';
  return upserted > 0 ? 'completed_with_errors' : 'failed';
}

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/**
 * An item as the service receives it: the JSON text a client sends for the value, parsed again
 * (`NaN` becomes null, `undefined` in an array becomes null, `-0` becomes 0, `__proto__` an own key).
 */
export function asSent(item: unknown): unknown {
  const text = JSON.stringify(item);
  return text === undefined ? null : (JSON.parse(text) as unknown);
}

/**
 * Creates an empty tenant catalog. `validate` defaults to the service's own item validator; pass one
 * to share a compiled validator between many models.
 */
export function createCatalogModel(validate: ItemValidator = createItemValidator()): CatalogModel {
  const catalog = new Map<string, ModelProduct>();
  const owners = new Map<string, string>();

  /** The `sku_conflict` errors of a valid item: each variant whose sku another product owns. */
  function conflicts(item: FullProductIngest): ModelError[] {
    const errors: ModelError[] = [];
    item.variants.forEach((variant, v) => {
      const owner = owners.get(variant.sku);
      if (owner !== undefined && owner !== item.external_id) {
        errors.push({ field: `variants[${v}].sku`, code: 'sku_conflict' });
      }
    });
    return errors;
  }

  /** Applies one valid, conflict-free item: present fields overwrite, variants by sku, images by url. */
  function upsert(item: FullProductIngest): void {
    const { variants, ...fields } = item;
    const product: ModelProduct = catalog.get(item.external_id) ?? { ...fields, variants: [] };
    Object.assign(product, fields);
    for (const incoming of variants) {
      const { images, ...variantFields } = incoming;
      let stored = product.variants.find((variant) => variant.sku === incoming.sku);
      if (!stored) {
        stored = { ...variantFields, images: [] };
        product.variants.push(stored);
        owners.set(incoming.sku, item.external_id);
      }
      Object.assign(stored, variantFields);
      for (const image of images ?? []) {
        const known = stored.images.find((candidate) => candidate.url === image.url);
        if (!known) stored.images.push({ url: image.url, angle: image.angle ?? null });
        else if (image.angle !== undefined) known.angle = image.angle;
      }
    }
    catalog.set(item.external_id, product);
  }

  return {
    applyBatch(items) {
      const failures: ModelFailure[] = [];
      let validatedOk = 0;
      let upserted = 0;
      items.map(asSent).forEach((item, index) => {
        const verdict = validate(item);
        let errors: ModelError[];
        if (verdict.ok) {
          validatedOk++;
          errors = conflicts(verdict.item);
          if (errors.length === 0) {
            upsert(verdict.item);
            upserted++;
            return;
          }
        } else {
          errors = verdict.errors.map(({ field, code }) => ({ field, code }));
        }
        const keys = itemKeys(item, errors as FieldError[]);
        failures.push({
          index,
          external_id: keys.external_id === null ? null : storable(keys.external_id),
          sku: keys.sku === null ? null : storable(keys.sku),
          errors: errors.map(({ field, code }) => ({ field: storable(field), code })),
        });
      });
      const failed = failures.length;
      return {
        failedIndices: failures.map((failure) => failure.index),
        upserted,
        failed,
        counters: {
          status: terminalStatus(upserted, failed),
          received_count: items.length,
          validated_ok: validatedOk,
          validated_failed: items.length - validatedOk,
          upserted,
          failed,
        },
        failures,
      };
    },

    product(externalId) {
      const product = catalog.get(externalId);
      return product ? clone(product) : null;
    },

    products() {
      return [...catalog.keys()].sort(compareExternalIds).map((id) => clone(catalog.get(id)!));
    },

    ownerOf(sku) {
      return owners.get(sku) ?? null;
    },
  };
}
