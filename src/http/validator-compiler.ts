import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { addUrlFormats } from '../validation/uri-format.ts';

function createAjv(coerceTypes: boolean): Ajv {
  // allErrors, so a 400 names every wrong field; verbose, so messages can name the enumeration;
  // never removeAdditional, since unknown properties are errors here, not noise to drop.
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    strict: false,
  });
  addUrlFormats(ajv);
  return ajv;
}

/** An integer written as text the plain way: decimal digits, perhaps a minus sign. */
const DECIMAL_INTEGER = /^-?\d+$/;

interface TextValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** How many (sub)schemas anywhere in `schema` allow an integer. */
function integerSchemasIn(schema: unknown): number {
  if (Array.isArray(schema)) return schema.reduce((n: number, s) => n + integerSchemasIn(s), 0);
  if (typeof schema !== 'object' || schema === null) return 0;
  const { type } = schema as { type?: unknown };
  const own = type === 'integer' || (Array.isArray(type) && type.includes('integer')) ? 1 : 0;
  return own + Object.values(schema).reduce((n: number, value) => n + integerSchemasIn(value), 0);
}

/**
 * Ajv coerces text to an integer as `Number()` does, so `0x10`, `1e2`, `5.0`, `+5` or ` 5` would
 * pass as integers. Text for an integer property must be decimal digits; anything else is refused
 * as not an integer, beside whatever else Ajv finds.
 */
function withDecimalIntegers(
  schema: { properties?: Record<string, { type?: unknown }> },
  validate: ValidateFunction,
) {
  const integers = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
  // The check reads top-level text only: refuse, when the routes are built, a schema with an
  // integer anywhere else (nested, in a union, beside null), which Ajv alone would coerce.
  if (integerSchemasIn(schema) !== integers.length)
    throw new Error('query and path integers must be top-level properties of type "integer"');
  if (integers.length === 0) return validate;
  const checked: TextValidator = (data) => {
    const values = (data ?? {}) as Record<string, unknown>;
    const bad = integers.filter(
      (name) => typeof values[name] === 'string' && !DECIMAL_INTEGER.test(values[name]),
    );
    const valid = validate(data);
    const others = (validate.errors ?? []).filter(
      (error) => !bad.some((name) => error.instancePath === `/${name}`),
    );
    const errors = [
      ...bad.map((name) => ({
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        keyword: 'type',
        params: { type: 'integer' },
        message: 'must be integer',
      })),
      ...others,
    ];
    checked.errors = errors.length > 0 ? errors : null;
    return valid && bad.length === 0;
  };
  return checked;
}

/**
 * Compiles route schemas. Bodies are never coerced (`"items": "x"` must not become `["x"]`); query
 * strings and path parameters are, because they arrive as text (`?limit=10`), integers only from
 * decimal digits.
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodies = createAjv(false);
  const text = createAjv(true);
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return bodies.compile(schema as object);
    const checked = httpPart === 'headers' ? lowerCaseHeaderNames(schema as object) : (schema as object);
    return withDecimalIntegers(checked, text.compile(checked));
  };
}

/**
 * Node gives header names in lower case; a schema names them as documents do (`Idempotency-Key`).
 * Fastify lowers them itself only for its own compiler, so this one does it for its copy.
 */
function lowerCaseHeaderNames(schema: { properties?: Record<string, unknown>; required?: string[] }) {
  const properties = Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([name, property]) => [name.toLowerCase(), property]),
  );
  return { ...schema, properties, required: schema.required?.map((name) => name.toLowerCase()) };
}
