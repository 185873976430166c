import { isIP } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FieldError } from '../http/errors.ts';
import { FullProductIngest, MAX_STRING_LENGTH } from '../catalog/product-schema.ts';
import { fieldErrorsFromAjv } from './item-errors.ts';

/** Most errors reported for one item; the rest are dropped (CONTRACT §5). */
export const MAX_ERRORS_PER_ITEM = 50;

// RFC 3986 §3, ASCII only. Each part is a run of the characters it may hold (unreserved, sub-delims,
// the delimiters it allows, or a %XX escape), and no two adjacent runs share a character that could
// end one and start the next: one pass, no backtracking, whatever the length.
const PLAIN = "A-Za-z0-9\\-._~!$&'()*+,;=";
const SCHEME = '[A-Za-z][A-Za-z0-9+.-]*';
const IP_LITERAL = `\\[(?:[0-9A-Fa-f:.]+|[vV][0-9A-Fa-f]+\\.[${PLAIN}:]+)\\]`;

/** The URI grammar; `escape` is what else a run may hold besides its characters (a %XX escape). */
function uriGrammar(escape: string): { withAuthority: RegExp; without: RegExp } {
  const run = (chars: string) => `(?:[${chars}]${escape})`;
  const tail = `(?:\\?${run(`${PLAIN}:@/?`)}*)?(?:#${run(`${PLAIN}:@/?`)}*)?$`;
  return {
    // scheme://[userinfo@]host[:port]/path…, the host captured (it may be empty).
    withAuthority: new RegExp(
      `^${SCHEME}://(?:${run(`${PLAIN}:`)}*@)?(?<host>${IP_LITERAL}|${run(PLAIN)}*)(?::[0-9]*)?` +
        `(?:/${run(`${PLAIN}:@`)}*)*${tail}`,
    ),
    // scheme:path… without an authority (mailto:, urn:, data:…).
    without: new RegExp(`^${SCHEME}:(?!//)${run(`${PLAIN}:@/`)}*${tail}`),
  };
}
// Most URLs hold no `%`: without the escape alternative the pattern is plain character classes.
const URI = uriGrammar('');
const URI_ESCAPED = uriGrammar('|%[0-9A-Fa-f]{2}');
const WEB_SCHEME = /^https?:/i;

/**
 * Format `uri` as CONTRACT §5 uses it: an absolute URI (RFC 3986), and a web URL (http, https) with
 * a host. White space, `<>"{}|\^\``, a `%` not followed by two hex digits, a second `#` or any
 * non-ASCII character make a value none (an IRI's characters must be percent-encoded, and a host
 * name in Unicode given in its `xn--` form); an IPv6 literal must be an address. A valid URI of
 * another scheme (`ftp://…`, `mailto:…`) passes, to be refused as not https by the schema's pattern.
 * Over-long values are refused before any test.
 */
export function isAbsoluteUri(value: string): boolean {
  if (value.length > MAX_STRING_LENGTH) return false;
  const grammar = value.includes('%') ? URI_ESCAPED : URI;
  const host = grammar.withAuthority.exec(value)?.groups?.host;
  if (host === undefined) return grammar.without.test(value) && !WEB_SCHEME.test(value);
  if (host === '') return !WEB_SCHEME.test(value);
  // The pattern only shapes an IPv6 literal; the address parser knows which are addresses.
  return host.startsWith('[') && !/^\[v/i.test(host) ? isIP(host.slice(1, -1)) === 6 : true;
}

/** The Ajv instance the worker validates items with: every error, no coercion, no defaults. */
export function createItemAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: true,
    coerceTypes: false,
    useDefaults: false,
  });
  ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUri });
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
        errors.push({
          field: `variants[${v}].sku`,
          code: 'duplicate_key',
          message: `variants[${v}].sku repeats the sku "${variant.sku}" of an earlier variant in this item.`,
        });
      }
      skus.add(variant.sku);
    }
    if (!Array.isArray(variant.images)) return;
    const urls = new Set<string>();
    variant.images.forEach((image: unknown, i) => {
      if (!isRecord(image) || typeof image.url !== 'string') return;
      if (urls.has(image.url)) {
        errors.push({
          field: `variants[${v}].images[${i}].url`,
          code: 'duplicate_key',
          message: `variants[${v}].images[${i}].url repeats an earlier image url of this variant.`,
        });
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
  return hasUnstorableString(value) ? collectUnstorable(value, '', []) : [];
}

function hasUnstorableString(value: unknown): boolean {
  if (typeof value === 'string') return unstorable(value);
  if (Array.isArray(value)) return value.some(hasUnstorableString);
  if (isRecord(value)) {
    for (const key in value) if (hasUnstorableString(value[key])) return true;
  }
  return false;
}

function collectUnstorable(value: unknown, path: string, out: FieldError[]): FieldError[] {
  if (typeof value === 'string') {
    if (unstorable(value)) {
      out.push({
        field: path,
        code: 'invalid_format',
        message: `${path || 'The value'} contains U+0000 or an unpaired surrogate.`,
      });
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) collectUnstorable(value[i], `${path}[${i}]`, out);
  } else if (isRecord(value)) {
    for (const key in value) collectUnstorable(value[key], path === '' ? key : `${path}.${key}`, out);
  }
  return out;
}

/** Compiles the validator from the one item schema (`FullProductIngest`). */
export function createItemValidator(ajv: Ajv = createItemAjv()): ItemValidator {
  const validate: ValidateFunction<FullProductIngest> = ajv.compile<FullProductIngest>(FullProductIngest);
  return (item) => {
    const valid = validate(item);
    const extra = [...duplicateKeyErrors(item), ...unstorableStringErrors(item)];
    if (valid && extra.length === 0) return { ok: true, item };
    const errors = valid ? extra : [...fieldErrorsFromAjv(validate.errors ?? []), ...extra];
    return { ok: false, errors: errors.slice(0, MAX_ERRORS_PER_ITEM) };
  };
}
