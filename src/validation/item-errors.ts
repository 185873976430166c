import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './string-enum.ts';

/**
 * The vocabulary of item errors (docs/reference.md §5): the codes, the record of a failed item, the keys it
 * is listed under and the messages the service writes itself. Schema violations are worded from
 * Ajv's errors in `field-errors.ts`, in the same codes.
 */

/**
 * The closed set of error codes (docs/reference.md §5). Item errors use them all; problem `errors[]` of the
 * envelope and of query parameters use the same words for the same defects.
 */
export const FIELD_ERROR_CODES = [
  'required',
  'unknown_field',
  'invalid_type',
  'invalid_value',
  'invalid_format',
  'https_required',
  'out_of_range',
  'too_few_items',
  'too_many_items',
  'duplicate_key',
  'sku_conflict',
  'internal_error',
] as const;

export type FieldErrorCode = (typeof FIELD_ERROR_CODES)[number];

/** One field error: in a problem's `errors[]`, and in an item's record on the errors page. */
export const FieldErrorSchema = Type.Object(
  {
    field: Type.String(),
    code: StringEnum(FIELD_ERROR_CODES),
    message: Type.String(),
  },
  { additionalProperties: false },
);

/** One defect of a field or query parameter, as problem `errors[]` and item errors report it. */
export type FieldError = Static<typeof FieldErrorSchema>;

/** One failed item on the errors page, with all its errors (docs/reference.md §7); stored as it is listed. */
export const ItemErrorRecord = Type.Object(
  {
    index: Type.Integer({ description: 'Index of the item within the batch' }),
    errors: Type.Array(FieldErrorSchema),
    external_id: Type.Union([Type.String(), Type.Null()]),
    sku: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false, title: 'ItemError' },
);

/** A failed item's record. */
export type ItemFailure = Static<typeof ItemErrorRecord>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The `external_id` and `sku` an errors page shows for a failed item: the item's external_id if it
 * is a string; the sku of the variant the first error is about, else of the first variant.
 */
export function itemKeys(
  item: unknown,
  errors: readonly FieldError[],
): { external_id: string | null; sku: string | null } {
  if (!isRecord(item)) return { external_id: null, sku: null };
  const variants = Array.isArray(item.variants) ? (item.variants as unknown[]) : [];
  const skuOf = (index: number) => {
    const variant = variants[index];
    return isRecord(variant) && typeof variant.sku === 'string' ? variant.sku : null;
  };
  const about = /^variants\[(\d+)\]/.exec(errors[0]?.field ?? '');
  return {
    external_id: typeof item.external_id === 'string' ? item.external_id : null,
    sku: (about ? skuOf(Number(about[1])) : null) ?? skuOf(0),
  };
}

/** The record of an item that could not be written for a reason that is not the caller's. */
export const internalError = (index: number, item: unknown): ItemFailure => {
  const errors: FieldError[] = [
    {
      field: '',
      code: 'internal_error',
      message: 'The item could not be written; this is not a fault of the item.',
    },
  ];
  return { index, ...itemKeys(item, errors), errors };
};

/** The record of an item that names a sku the product `owner` of the tenant owns (the tenant's own data). */
export const skuConflict = (variantIndex: number, sku: string, owner: string): FieldError => ({
  field: `variants[${variantIndex}].sku`,
  code: 'sku_conflict',
  message: `sku "${sku}" already belongs to the product "${owner}" of this tenant.`,
});

/** A variant's sku that an earlier variant of the same item has. */
export const duplicateSku = (variantIndex: number, sku: string): FieldError => ({
  field: `variants[${variantIndex}].sku`,
  code: 'duplicate_key',
  message: `variants[${variantIndex}].sku repeats the sku "${sku}" of an earlier variant in this item.`,
});

/** An image url that an earlier image of the same variant has. */
export const duplicateImageUrl = (variantIndex: number, imageIndex: number): FieldError => ({
  field: `variants[${variantIndex}].images[${imageIndex}].url`,
  code: 'duplicate_key',
  message: `variants[${variantIndex}].images[${imageIndex}].url repeats an earlier image url of this variant.`,
});

/** A string PostgreSQL cannot store as text (U+0000, a lone surrogate), at `path`. */
export const unstorableString = (path: string): FieldError => ({
  field: path,
  code: 'invalid_format',
  message: `${path || 'The value'} contains U+0000 or an unpaired surrogate.`,
});
