import { MAX_IMAGES_PER_VARIANT } from '../catalog/product-schema.ts';
import { PRODUCT_COLUMNS, SHEET_COLUMNS } from '../spreadsheets/sheet-layout.ts';
import type { StoredProduct, StoredVariant } from './ingest-parts.ts';

/** A cell of an exported row: text, a number, or null for an empty cell (a field with no value stored). */
export type ExportCell = string | number | null;

const COLUMN_INDEX = new Map(SHEET_COLUMNS.map((column, index) => [column, index]));

const at = (column: string) => COLUMN_INDEX.get(column) ?? -1;

/** Which columns hold text (the others numbers), so a writer can guard or type them. */
export const TEXT_COLUMN = SHEET_COLUMNS.map(
  (column) => !['depth', 'height', 'width', 'weight', 'price'].includes(column) && !column.endsWith('_angle'),
);

function variantRow(
  product: StoredProduct,
  variant: StoredVariant,
  from: number,
  first: boolean,
): ExportCell[] {
  const row: ExportCell[] = new Array<ExportCell>(SHEET_COLUMNS.length).fill(null);
  row[at('external_id')] = product.external_id;
  row[at('sku')] = variant.sku;
  if (first) {
    for (const [column, value] of [
      ['variant_name', variant.name],
      ['item_url', variant.item_url],
      ['depth', variant.depth],
      ['height', variant.height],
      ['width', variant.width],
      ['weight', variant.weight],
      ['color', variant.color],
      ['price', variant.price],
      ['brand', variant.brand],
    ] as const) {
      row[at(column)] = value;
    }
  }
  variant.images.slice(from, from + MAX_IMAGES_PER_VARIANT).forEach((image, i) => {
    row[at(`image_${i + 1}_url`)] = image.url;
    row[at(`image_${i + 1}_angle`)] = typeof image.angle === 'number' ? image.angle : null;
  });
  return row;
}

/**
 * A stored product as rows of the spreadsheet layout (docs/reference.md §11.5), columns in `SHEET_COLUMNS`
 * order: a row per variant, its first 10 images in the image columns, and each further 10 on a row
 * of its own with the same `sku` and the variant's other cells empty (docs/reference.md §11.4), which an import sends
 * as a later item of the product. The product's cells are written on its first row only, and its
 * `external_id` on every row: editing the product then means editing one row, never keeping several
 * equal.
 */
export function productRows(product: StoredProduct): ExportCell[][] {
  const rows: ExportCell[][] = [];
  for (const variant of product.variants) {
    rows.push(variantRow(product, variant, 0, true));
  }
  for (const variant of product.variants) {
    for (let from = MAX_IMAGES_PER_VARIANT; from < variant.images.length; from += MAX_IMAGES_PER_VARIANT) {
      rows.push(variantRow(product, variant, from, false));
    }
  }
  const first = rows[0];
  if (first !== undefined) {
    for (const column of PRODUCT_COLUMNS) first[at(column)] = product[column];
  }
  return rows;
}
