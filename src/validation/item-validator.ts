import { Ajv, type ValidateFunction } from 'ajv';
import { duplicateImageUrl, duplicateSku, unstorableString, type FieldError } from './item-errors.ts';
import { FullProductIngest } from '../catalog/product-schema.ts';
import { fieldErrorsFromAjv } from './field-errors.ts';
import { addUrlFormats } from './uri-format.ts';

/** Most errors reported for one item; the rest are dropped (docs/reference.md §5). */
export const MAX_ERRORS_PER_ITEM = 50;

/** The Ajv instance the worker validates items with: every error, no coercion, no defaults. */
export function createItemAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: true,
    coerceTypes: false,
    useDefaults: false,
  });
  addUrlFormats(ajv);
  return ajv;
}

type Verdict = { ok: true; item: FullProductIngest } | { ok: false; errors: FieldError[] };

/** Validates one batch item against the spec's schema; pure and deterministic. */
export type ItemValidator = (item: unknown) => Verdict;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Keys that must be unique within one item: `sku` across its variants, image `url` within a
 * variant. Reads the item defensively, so duplicates are reported beside schema errors too; the
 * later occurrence is the one named.
 */
function duplicateKeyErrors(item: unknown): FieldError[] {
  const errors: FieldError[] = [];
  if (!isRecord(item) || !Array.isArray(item.variants)) return errors;
  const skus = new Set<string>();
  item.variants.forEach((variant: unknown, v) => {
    if (!isRecord(variant)) return;
    if (typeof variant.sku === 'string') {
      if (skus.has(variant.sku)) {
        errors.push(duplicateSku(v, variant.sku));
      }
      skus.add(variant.sku);
    }
    if (!Array.isArray(variant.images)) return;
    const urls = new Set<string>();
    variant.images.forEach((image: unknown, i) => {
      if (!isRecord(image) || typeof image.url !== 'string') return;
      if (urls.has(image.url)) {
        errors.push(duplicateImageUrl(v, i));
      }
      urls.add(image.url);
    });
  });
  return errors;
}

const unstorable = (text: string) => text.includes('\u0000') || !text.isWellFormed();

/**
 * Strings PostgreSQL cannot store as text: a U+0000 or a lone surrogate (valid JSON escapes both).
 * Reported as `invalid_format` rather than left to fail the write as an internal error.
 */
function unstorableStringErrors(value: unknown): FieldError[] {
  // A quick pass first: this runs on every item, and paths are only worth building for a hit.
  return hasUnstorableString(value) ? collectUnstorable(value, '', [], true) : [];
}

function hasUnstorableString(value: unknown): boolean {
  if (typeof value === 'string') return unstorable(value);
  if (Array.isArray(value)) return value.some(hasUnstorableString);
  if (isRecord(value)) {
    for (const key in value) if (hasUnstorableString(value[key])) return true;
  }
  return false;
}

/** `atItem`: `value` is the item itself, whose keys start a path (an empty key is a member too). */
function collectUnstorable(value: unknown, path: string, out: FieldError[], atItem = false): FieldError[] {
  if (typeof value === 'string') {
    if (unstorable(value)) {
      out.push(unstorableString(path));
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) collectUnstorable(value[i], `${path}[${i}]`, out);
  } else if (isRecord(value)) {
    for (const key in value) collectUnstorable(value[key], atItem ? key : `${path}.${key}`, out);
  }
  return out;
}

/**
 * One error per field and code, the first kept: a URL holding U+0000 is not a URI either, and the
 * schema's `invalid_format` already names it.
 */
function withoutRepeats(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter(({ field, code }) => {
    const key = `${code}\u0000${field}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Compiles the validator from the one item schema (`FullProductIngest`). */
export function createItemValidator(ajv: Ajv = createItemAjv()): ItemValidator {
  const validate: ValidateFunction<FullProductIngest> = ajv.compile<FullProductIngest>(FullProductIngest);
  return (item) => {
    const valid = validate(item);
    const extra = [...duplicateKeyErrors(item), ...unstorableStringErrors(item)];
    if (valid && extra.length === 0) return { ok: true, item };
    const errors = valid ? extra : withoutRepeats([...fieldErrorsFromAjv(validate.errors ?? []), ...extra]);
    return { ok: false, errors: errors.slice(0, MAX_ERRORS_PER_ITEM) };
  };
}
