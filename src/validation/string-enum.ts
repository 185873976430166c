import { Type } from '@sinclair/typebox';

/**
 * A string that must be one of `values`, exactly: one JSON Schema `enum` (so one OpenAPI enum and one
 * Ajv check) typed as the union of the values. Every closed set of names in a schema is written so.
 */
export function StringEnum<const T extends readonly string[]>(values: T, description?: string) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], description });
}
