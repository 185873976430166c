import { Type } from '@sinclair/typebox';

/**
 * A string that must be one of `values`, exactly: one JSON Schema `enum` (so one OpenAPI enum and one
 * Ajv check) typed as the union of the values. The ingestion, error and webhook schemas write their
 * closed sets so; the analyzer's and health answers keep unions of literals, which their OpenAPI
 * document shows as `anyOf`. `title` names the enumeration (`FurnitureColor`): an error for a value
 * outside a long one names it (docs/reference.md §11.8); `description` says what the field means.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  { title, description }: { title?: string; description?: string } = {},
) {
  return Type.Unsafe<T[number]>({
    type: 'string',
    enum: [...values],
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
  });
}
