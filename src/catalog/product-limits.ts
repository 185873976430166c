/**
 * The item's size limits (CONTRACT §5), apart from the schema so that code without TypeBox (the
 * spreadsheet converter in the dashboard's bundle) reads the same numbers.
 */

/** Longest string any field may hold (CONTRACT §5). */
export const MAX_STRING_LENGTH = 65_535;
/** Longest `external_id` or `sku`. */
export const MAX_KEY_LENGTH = 255;
/** Most images one variant of one item may carry. */
export const MAX_IMAGES_PER_VARIANT = 10;
