/**
 * The catalog's size limits (docs/reference.md §5), in a module of their own without the schema library, so
 * that the dashboard's bundle can read them (through the spreadsheet layout) without TypeBox.
 */

/** Longest string any field may hold. */
export const MAX_STRING_LENGTH = 65_535;
/** Longest `external_id` or `sku`. */
export const MAX_KEY_LENGTH = 255;
/** Most images one variant of an item may send. */
export const MAX_IMAGES_PER_VARIANT = 10;
