import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../validation/string-enum.ts';
import { FURNITURE_COLORS, FURNITURE_STYLES, FURNITURE_SUB_TYPES, FURNITURE_TYPES } from './enums.ts';
import { MAX_IMAGES_PER_VARIANT, MAX_KEY_LENGTH, MAX_STRING_LENGTH } from './catalog-limits.ts';

export { MAX_IMAGES_PER_VARIANT, MAX_KEY_LENGTH, MAX_STRING_LENGTH };

/** A deduplication key: 1–255 characters, not only white space. */
function Key(description: string) {
  return Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, pattern: '\\S', description });
}

const Text = (description?: string) => Type.String({ maxLength: MAX_STRING_LENGTH, description });

/**
 * The format of item URLs: an absolute `https:` URL with a host (`src/validation/uri-format.ts`).
 * A valid URI of another scheme is `https_required`, anything else `invalid_format`.
 */
export const HTTPS_URL_FORMAT = 'https-url';

/** An absolute `https:` URL with a host. */
const HttpsUrl = (description: string) =>
  Type.String({ format: HTTPS_URL_FORMAT, maxLength: MAX_STRING_LENGTH, description });

const Measure = (description: string) => Type.Number({ minimum: 0, description });

/** ProductImageIngest: merged into a variant's images by `url`. */
export const ProductImageIngest = Type.Object(
  {
    url: HttpsUrl('HTTPS URL of the image; the merge key among a variant’s images'),
    angle: Type.Optional(
      Type.Unsafe<number | null>({
        type: ['number', 'null'],
        minimum: 0,
        maximum: 360,
        description: 'Viewing angle in degrees, 0–360; null clears a stored angle, absent keeps it',
      }),
    ),
  },
  { additionalProperties: false, title: 'ProductImageIngest' },
);

/**
 * The catalog's enumerations as schemas, named by their `title` (which errors and the API reference
 * use, docs/reference.md §11.8): one source for the item's fields and the search's filters.
 */
export const FurnitureEnum = {
  color: (description?: string) => StringEnum(FURNITURE_COLORS, { title: 'FurnitureColor', description }),
  style: (description?: string) => StringEnum(FURNITURE_STYLES, { title: 'FurnitureStyle', description }),
  type: (description?: string) => StringEnum(FURNITURE_TYPES, { title: 'FurnitureType', description }),
  sub_type: (description?: string) =>
    StringEnum(FURNITURE_SUB_TYPES, { title: 'FurnitureSubType', description }),
};

/** ProductVariantIngest: deduplicated by `sku` within the tenant. */
export const ProductVariantIngest = Type.Object(
  {
    sku: Key('Variant deduplication key, unique per tenant'),
    name: Text(),
    item_url: HttpsUrl('HTTPS URL of the variant’s product page'),
    depth: Measure('Depth (unit not specified)'),
    height: Measure('Height (unit not specified)'),
    width: Measure('Width (unit not specified)'),
    weight: Measure('Weight (unit not specified)'),
    color: FurnitureEnum.color(),
    price: Measure('Price (currency not specified)'),
    brand: Text(),
    images: Type.Optional(
      Type.Array(ProductImageIngest, {
        minItems: 1,
        maxItems: MAX_IMAGES_PER_VARIANT,
        description: 'Absent keeps the stored images; present merges them by url',
      }),
    ),
  },
  { additionalProperties: false, title: 'ProductVariantIngest' },
);

/** FullProductIngest: one product with its variants, deduplicated by `external_id`. */
export const FullProductIngest = Type.Object(
  {
    external_id: Key('Product deduplication key, unique per tenant'),
    name: Text(),
    description: Text(),
    style: FurnitureEnum.style(),
    type: FurnitureEnum.type(),
    sub_type: FurnitureEnum.sub_type(),
    variants: Type.Array(ProductVariantIngest, { minItems: 1 }),
  },
  { additionalProperties: false, title: 'FullProductIngest' },
);

export type ProductImageIngest = Static<typeof ProductImageIngest>;
export type ProductVariantIngest = Static<typeof ProductVariantIngest>;
export type FullProductIngest = Static<typeof FullProductIngest>;

/** A stored image: its angle is null when none is stored (docs/reference.md §9). */
const ImageView = Type.Object(
  {
    url: ProductImageIngest.properties.url,
    angle: Type.Union([Type.Number({ minimum: 0, maximum: 360 }), Type.Null()]),
  },
  { additionalProperties: false },
);

/** A stored variant: the ingest shape, with every stored image in merge order. */
const VariantView = Type.Composite(
  [Type.Omit(ProductVariantIngest, ['images']), Type.Object({ images: Type.Array(ImageView) })],
  { additionalProperties: false, title: 'ProductVariant' },
);

/**
 * A stored product as the catalog reads show it (docs/reference.md §9): the ingest shape plus timestamps,
 * variants in order of first creation.
 */
export const ProductView = Type.Composite(
  [
    Type.Omit(FullProductIngest, ['variants']),
    Type.Object({
      created_at: Type.String({ format: 'date-time' }),
      updated_at: Type.String({ format: 'date-time' }),
      variants: Type.Array(VariantView),
    }),
  ],
  { additionalProperties: false, title: 'Product' },
);
export type ProductView = Static<typeof ProductView>;
