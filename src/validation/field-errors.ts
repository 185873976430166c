import { HTTPS_URL_FORMAT } from '../catalog/product-schema.ts';
import { isAbsoluteUri } from './uri-format.ts';
import type { FieldError } from './item-errors.ts';
import { closestEnumValues } from './enum-suggestion.ts';

/** The part of an Ajv error this module reads (Ajv and Fastify's validation errors both fit). */
export interface AjvLikeError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string | undefined;
  parentSchema?: Record<string, unknown> | undefined;
  data?: unknown;
}

/**
 * Turns a JSON pointer (`/variants/0/price`) into the contract's path (`variants[0].price`). A key
 * is joined with a `.` unless it is the item's own: an empty key names a member too, so `/` and `//x`
 * read `` and `.x`, not the item itself and `x`.
 */
export function pathFromPointer(pointer: string): string {
  if (pointer === '') return '';
  let out = '';
  for (const [depth, raw] of pointer.slice(1).split('/').entries()) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(part) ? `[${part}]` : depth === 0 ? part : `.${part}`;
  }
  return out;
}

/** The path of `property` of the object at `pointer` (a JSON pointer, `` for the item). */
export function childPath(pointer: string, property: string): string {
  return pointer === '' ? property : `${pathFromPointer(pointer)}.${property}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a finite number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function typeText(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');
}

/** Enumerations up to this size are listed whole in an error; larger ones are named (docs/reference.md §11.8). */
export const LISTED_ENUM_MAX = 12;

/**
 * The page that lists every value of the named enumerations, one section each, whose id is the
 * enumeration's name (`/problems/validation-error#FurnitureColor`): a page of the service itself,
 * open without a token, so a person reading an error can open it (docs/api-conventions.md#errors).
 */
export const ENUMERATIONS_PAGE = '/problems/validation-error';

/** Where the values of the enumeration `name` are listed. */
export const enumerationLink = (name: string) => `${ENUMERATIONS_PAGE}#${name}`;

const quoted = (values: readonly unknown[]) => values.map((v) => JSON.stringify(v)).join(', ');

/** Characters of a sent value shown in a message; a longer one is cut, with `…`. */
const SHOWN_VALUE_MAX = 60;

/**
 * The value sent, as JSON writes it (so quotes, control characters and lone surrogates show
 * escaped), cut to its first {@link SHOWN_VALUE_MAX} characters.
 */
function shownValue(sent: unknown): string {
  if (typeof sent !== 'string') return JSON.stringify(sent) ?? String(sent);
  const characters = Array.from(sent);
  if (characters.length <= SHOWN_VALUE_MAX) return JSON.stringify(sent);
  return `${JSON.stringify(characters.slice(0, SHOWN_VALUE_MAX).join('')).slice(0, -1)}…"`;
}

/**
 * The message for a value outside an enumeration, the one every enumeration error is worded with
 * (item fields, preview, query parameters, spreadsheet cells): it names the value sent; a short
 * enumeration is listed whole, with the value most likely meant; a long one is named, with its
 * count, where its values are listed, and up to 3 values closest to what was sent.
 */
export function enumMessage(
  label: string,
  name: string | undefined,
  allowed: readonly unknown[],
  sent: unknown,
) {
  const values = `the ${name ?? 'allowed'} values`;
  const refused = `${label} ${shownValue(sent)} is not one of`;
  if (allowed.length <= LISTED_ENUM_MAX) {
    const [meant] = closestEnumValues(sent, allowed, 1);
    const hint = meant === undefined ? '.' : `; did you mean ${JSON.stringify(meant)}?`;
    return `${refused} ${values} (exact, case-sensitive): ${quoted(allowed)}${hint}`;
  }
  const closest = closestEnumValues(sent, allowed, 3);
  const hint = closest.length === 0 ? '' : `; closest: ${quoted(closest)}`;
  const where = name === undefined ? '' : `, listed at ${enumerationLink(name)}`;
  return `${refused} the ${allowed.length} ${name ?? 'allowed'} values (exact, case-sensitive${where})${hint}.`;
}

/** Maps one Ajv error onto the contract's codes, or `null` for errors another one already covers. */
function mapError(error: AjvLikeError): FieldError | null {
  const path = pathFromPointer(error.instancePath);
  const label = path === '' ? 'The value' : path;
  const p = error.params;
  switch (error.keyword) {
    case 'required': {
      const field = childPath(error.instancePath, String(p.missingProperty));
      return { field, code: 'required', message: `${field} is required.` };
    }
    case 'additionalProperties': {
      const field = childPath(error.instancePath, String(p.additionalProperty));
      return { field, code: 'unknown_field', message: `${field} is not a known field.` };
    }
    case 'type':
      return { field: path, code: 'invalid_type', message: `${label} must be ${typeText(p.type)}.` };
    case 'enum': {
      const title = error.parentSchema?.title;
      const name = typeof title === 'string' ? title : undefined;
      const allowed = Array.isArray(p.allowedValues) ? (p.allowedValues as unknown[]) : [];
      return { field: path, code: 'invalid_value', message: enumMessage(label, name, allowed, error.data) };
    }
    case 'format':
      if (p.format === HTTPS_URL_FORMAT && typeof error.data === 'string' && isAbsoluteUri(error.data)) {
        return { field: path, code: 'https_required', message: `${label} must use https.` };
      }
      return {
        field: path,
        code: 'invalid_format',
        message: `${label} must be an absolute URL with a host, in URI syntax (RFC 3986; escape other characters as %XX).`,
      };
    case 'pattern': {
      // A schema may say in words what its pattern asks (`x-pattern-rule`); else it is the keys' rule.
      const rule = error.parentSchema?.['x-pattern-rule'];
      const says = typeof rule === 'string' ? rule : 'must not be blank';
      return { field: path, code: 'invalid_format', message: `${label} ${says}.` };
    }
    case 'minLength':
      return { field: path, code: 'invalid_format', message: `${label} must not be empty.` };
    case 'maxLength':
      return {
        field: path,
        code: 'invalid_format',
        message: `${label} must be at most ${String(p.limit)} characters.`,
      };
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return {
        field: path,
        code: 'out_of_range',
        message: `${label} must be ${String(p.comparison)} ${String(p.limit)}.`,
      };
    case 'minItems':
      return {
        field: path,
        code: 'too_few_items',
        message: `${label} must have at least ${String(p.limit)} element${p.limit === 1 ? '' : 's'}.`,
      };
    case 'maxItems':
      return {
        field: path,
        code: 'too_many_items',
        message: `${label} must have at most ${String(p.limit)} elements.`,
      };
    case 'uniqueItems':
      // Ajv's `i` is the earlier of the two equal elements, `j` the later.
      return {
        field: path,
        code: 'invalid_value',
        message: `${label} must not list a value twice: ${label}[${String(p.i)}] and ${label}[${String(p.j)}] are the same.`,
      };
    default:
      return { field: path, code: 'invalid_value', message: `${label} ${error.message ?? 'is not valid'}.` };
  }
}

/**
 * Maps Ajv's errors (allErrors mode) onto the contract's field errors, in Ajv's order, keeping one
 * error per field and cause: a wrong type hides the other checks of that field (so a number where an
 * enumeration is expected is `invalid_type`, not `invalid_value`), and an invalid URL is only
 * `invalid_format`, never also `https_required`.
 */
export function fieldErrorsFromAjv(errors: readonly AjvLikeError[]): FieldError[] {
  const mapped = errors.map(mapError).filter((e): e is FieldError => e !== null);
  const typeWrong = new Set(mapped.filter((e) => e.code === 'invalid_type').map((e) => e.field));
  const formatWrong = new Set(mapped.filter((e) => e.code === 'invalid_format').map((e) => e.field));
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const e of mapped) {
    if (
      typeWrong.has(e.field) &&
      e.code !== 'invalid_type' &&
      e.code !== 'required' &&
      e.code !== 'unknown_field'
    ) {
      continue;
    }
    if (e.code === 'https_required' && formatWrong.has(e.field)) continue;
    const key = `${e.code}\u0000${e.field}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  return out;
}

/**
 * The errors of a submission's envelope (docs/reference.md §4), whose `field` is `items` or the unknown
 * property's name: a body that is not an object is an error on `items`, which it cannot hold.
 */
export function envelopeErrorsFromAjv(errors: readonly AjvLikeError[]): FieldError[] {
  return fieldErrorsFromAjv(errors).map((e) =>
    e.field === ''
      ? { field: 'items', code: e.code, message: 'The body must be a JSON object with an "items" array.' }
      : e,
  );
}
