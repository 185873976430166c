import { MAX_IMAGES_PER_VARIANT } from '../catalog/catalog-limits.ts';

/** The XLSX media type, as the export sends it and a browser names a dropped file. */
export const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** The product columns of the spreadsheet layout (docs/reference.md §11.5), each the product field of its name. */
export const PRODUCT_COLUMNS = ['external_id', 'name', 'description', 'style', 'type', 'sub_type'] as const;

/** The variant columns; `variant_name` holds the variant's `name`, the others the field of their name. */
export const VARIANT_COLUMNS = [
  'sku',
  'variant_name',
  'item_url',
  'depth',
  'height',
  'width',
  'weight',
  'color',
  'price',
  'brand',
] as const;

export type ProductColumn = (typeof PRODUCT_COLUMNS)[number];
export type VariantColumn = (typeof VARIANT_COLUMNS)[number];

/** The variant field a variant column holds. */
export const variantField = (column: VariantColumn) => (column === 'variant_name' ? 'name' : column);

/** The column of image `n` (1-based): its url or its angle. */
export const imageColumn = (n: number, part: 'url' | 'angle') => `image_${n}_${part}`;

/** Every image column, in order: `image_1_url, image_1_angle, …, image_10_angle`. */
export const IMAGE_COLUMNS: readonly string[] = Array.from({ length: MAX_IMAGES_PER_VARIANT }, (_, i) => [
  imageColumn(i + 1, 'url'),
  imageColumn(i + 1, 'angle'),
]).flat();

/** Every column in the order an export writes them, which is the template's header. */
export const SHEET_COLUMNS: readonly string[] = [...PRODUCT_COLUMNS, ...VARIANT_COLUMNS, ...IMAGE_COLUMNS];

/** Columns whose cells are numbers (plain decimals with `.`); the others are text. */
export const NUMERIC_COLUMNS: ReadonlySet<string> = new Set([
  'depth',
  'height',
  'width',
  'weight',
  'price',
  ...Array.from({ length: MAX_IMAGES_PER_VARIANT }, (_, i) => imageColumn(i + 1, 'angle')),
]);

const KNOWN_COLUMNS: ReadonlySet<string> = new Set(SHEET_COLUMNS);

/**
 * A defect that refuses the whole file before anything is sent (docs/reference.md §11.5): where it is, the
 * header being row 1, and the column it concerns.
 */
export class SheetLayoutError extends Error {
  constructor(
    readonly reason: string,
    readonly row: number,
    readonly column: string,
    options?: { cause?: unknown },
  ) {
    super(`row ${row}, column ${JSON.stringify(column)}: ${reason}`, options);
  }
}

/**
 * The UTF-8 byte order mark (EF BB BF) read as Latin-1 (Windows-1252) and written again as UTF-8: what
 * a first header cell starts with after a program opened our UTF-8 CSV as Latin-1 and saved it.
 */
const MISREAD_BOM = '\u00EF\u00BB\u00BF';

/** The refusal of a file whose first header cell starts with MISREAD_BOM: its other texts are garbled too. */
function misreadUtf8(name: string): SheetLayoutError {
  return new SheetLayoutError(
    'the file is UTF-8 that another program read as Latin-1 (Windows-1252) and wrote again: ' +
      `"${MISREAD_BOM}" is UTF-8's byte order mark read as three letters, and every other accented ` +
      'letter is garbled the same way (é as Ã©). Open the original file again as UTF-8 (LibreOffice: ' +
      'Character set "Unicode (UTF-8)" in the import dialog; Excel: Data → From Text/CSV, File origin ' +
      '"65001: Unicode (UTF-8)") and save it as "CSV UTF-8"',
    1,
    name,
  );
}

/** Where each column of a file is: the column's name → its 0-based index among the row's cells. */
export type ColumnIndex = ReadonlyMap<string, number>;

/**
 * Reads the header row: every name a column of the layout, none twice, `external_id` among them.
 * Names are taken as written (case-sensitive) after trimming spaces, which spreadsheet programs add
 * and a merchandiser cannot see.
 */
export function readHeader(cells: readonly string[]): ColumnIndex {
  const columns = new Map<string, number>();
  cells.forEach((raw, index) => {
    const name = raw.trim();
    if (index === 0 && name.startsWith(MISREAD_BOM)) throw misreadUtf8(name);
    // Empty cells after the last column are what spreadsheet programs leave behind: no column.
    if (name === '' && cells.slice(index).every((cell) => cell.trim() === '')) return;
    if (!KNOWN_COLUMNS.has(name)) {
      throw new SheetLayoutError(
        `unknown column (column ${index + 1}); the columns are ${PRODUCT_COLUMNS.join(', ')}, ` +
          `${VARIANT_COLUMNS.join(', ')}, image_1_url, image_1_angle, … image_10_angle`,
        1,
        name,
      );
    }
    if (columns.has(name)) {
      throw new SheetLayoutError(
        `repeated column (columns ${(columns.get(name) ?? 0) + 1} and ${index + 1})`,
        1,
        name,
      );
    }
    columns.set(name, index);
  });
  if (!columns.has('external_id')) {
    throw new SheetLayoutError('no external_id column: each row needs its product', 1, 'external_id');
  }
  return columns;
}
