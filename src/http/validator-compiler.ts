import { Ajv } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { isAbsoluteUrlWithHost } from '../ingestion/item-validator.ts';

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
  ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUrlWithHost });
  return ajv;
}

/**
 * Compiles route schemas. Bodies are never coerced (`"items": "x"` must not become `["x"]`); query
 * strings and path parameters are, because they arrive as text (`?limit=10`).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodies = createAjv(false);
  const text = createAjv(true);
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodies : text).compile(schema as object);
}
