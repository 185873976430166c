import { MAX_IMAGES_PER_VARIANT } from '../catalog/catalog-limits.ts';
import { readCell, type SheetCell } from './sheet-cells.ts';
import {
  imageColumn,
  PRODUCT_COLUMNS,
  readHeader,
  SheetLayoutError,
  VARIANT_COLUMNS,
  variantField,
  type ColumnIndex,
} from './sheet-layout.ts';

/** Where a field of an item came from in the file: its row (the header is row 1) and column. */
export interface CellPlace {
  row: number;
  /** Null for the item as a whole (`field` `""`). */
  column: string | null;
}

/** An item error found in the file's cells; the item is not sent. The service's codes (docs/reference.md §5). */
export interface CellError {
  field: string;
  code: string;
  message: string;
}

/** One item read from a spreadsheet: its JSON text, the errors found in its cells, and where its fields are. */
export interface SheetItem {
  text: string;
  /** The product's id as its cells give it (a text), to name an item that is not sent. */
  externalId: string | null;
  /** Not empty: the item cannot be sent as it is; these are its errors. */
  cellErrors: CellError[];
  /** The row the item starts on. */
  row: number;
  /** The row and column an error's `field` (`variants[0].price`) points at. */
  locate: (field: string) => CellPlace;
}

/** A row of a variant: its values, and which image columns gave its images, in order. */
interface VariantRow {
  row: number;
  sku: string | null;
  fields: Record<string, unknown>;
  images: Array<{ n: number; image: Record<string, unknown> }>;
  errors: Array<{ path: string; column: string; message: string }>;
}

interface ProductGroup {
  key: string | null;
  row: number;
  cells: Map<string, SheetCell>;
  fields: Record<string, unknown>;
  errors: Array<{ path: string; column: string; message: string }>;
  /** The variants of the product's first item, one per sku. */
  variants: VariantRow[];
  /** Rows repeating a sku: each a later item holding that variant with the row's images. */
  parts: Array<{ variant: VariantRow; base: VariantRow }>;
}

const VARIANT_PATH = /^variants\[(\d+)\](?:\.(\w+)(?:\[(\d+)\](?:\.(\w+))?)?)?$/;

const sameCell = (a: SheetCell, b: SheetCell) =>
  a === b || (a !== null && b !== null && String(a) === String(b));

/**
 * Turns the rows of a spreadsheet in the layout of docs/reference.md §11.5 into ingest items, a product at a
 * time: its rows are consecutive, so an item is complete when the next product's first row comes.
 * It holds one product's rows and the external_ids seen so far (to tell a product whose rows are not
 * consecutive), so a file of any length is read with memory that grows only with its product count.
 * Knows nothing of the file's format: a CSV or XLSX reader hands it rows of cells, in the browser as
 * in Node. The layout defects of docs/reference.md §11.5 throw `SheetLayoutError`; every other defect is an item error.
 */
export class SheetItemReader {
  readonly #columns: ColumnIndex;
  readonly #seen = new Set<string>();
  #group: ProductGroup | null = null;
  #width: number;
  readonly #layoutOnly: boolean;

  /**
   * `header` is row 1's cells; throws `SheetLayoutError` for an unknown, repeated or missing column.
   * With `layoutOnly`, the reader only checks the layout and hands over no items: the pass that
   * refuses a file before anything is sent then reads no cell's value, and writes no item's text.
   */
  constructor(header: readonly SheetCell[], { layoutOnly = false }: { layoutOnly?: boolean } = {}) {
    const names = header.map((cell) => (cell === null ? '' : String(cell)));
    this.#columns = readHeader(names);
    this.#width = names.length;
    this.#layoutOnly = layoutOnly;
  }

  /** Reads row number `row` (the header being 1); returns the items it completed. */
  push(cells: readonly SheetCell[], row: number): SheetItem[] {
    if (cells.every((cell) => cell === null)) return [];
    for (let index = this.#width; index < cells.length; index++) {
      if (cells[index] !== null) {
        throw new SheetLayoutError(`a value in column ${index + 1}, which has no header`, row, '');
      }
    }
    const cell = (column: string) => {
      const index = this.#columns.get(column);
      return index === undefined ? null : (cells[index] ?? null);
    };
    const idCell = cell('external_id');
    const key = idCell === null ? null : String(idCell);
    const group = this.#group;
    if (group !== null && key !== null && group.key === key) {
      for (const column of PRODUCT_COLUMNS) {
        const later = cell(column);
        if (later !== null && !sameCell(later, group.cells.get(column) ?? null)) {
          throw new SheetLayoutError(
            `differs from the product's first row (row ${group.row}); leave it empty or write the same value`,
            row,
            column,
          );
        }
      }
      if (!this.#layoutOnly) this.#addVariant(group, cell, row);
      return [];
    }
    if (key !== null) {
      if (this.#seen.has(key)) {
        throw new SheetLayoutError(
          `the rows of product ${JSON.stringify(key)} are not consecutive: it appeared on an earlier row`,
          row,
          'external_id',
        );
      }
      this.#seen.add(key);
    }
    const done = group === null || this.#layoutOnly ? [] : itemsOf(group);
    this.#group = this.#startGroup(key, cell, row);
    return done;
  }

  /** Declares the file complete; returns the last product's items. */
  end(): SheetItem[] {
    const group = this.#group;
    this.#group = null;
    return group === null || this.#layoutOnly ? [] : itemsOf(group);
  }

  #startGroup(key: string | null, cell: (column: string) => SheetCell, row: number): ProductGroup {
    const group: ProductGroup = {
      key,
      row,
      cells: new Map(),
      fields: {},
      errors: [],
      variants: [],
      parts: [],
    };
    for (const column of PRODUCT_COLUMNS) group.cells.set(column, cell(column));
    if (this.#layoutOnly) return group;
    for (const column of PRODUCT_COLUMNS) {
      const value = group.cells.get(column) ?? null;
      const reading = readCell(column, value);
      if ('error' in reading) group.errors.push({ path: column, column, message: reading.error });
      else if (!reading.absent) group.fields[column] = reading.value;
    }
    this.#addVariant(group, cell, row);
    return group;
  }

  #addVariant(group: ProductGroup, cell: (column: string) => SheetCell, row: number): void {
    const variant: VariantRow = { row, sku: null, fields: {}, images: [], errors: [] };
    for (const column of VARIANT_COLUMNS) {
      const reading = readCell(column, cell(column));
      const field = variantField(column);
      if ('error' in reading) variant.errors.push({ path: field, column, message: reading.error });
      else if (!reading.absent) variant.fields[field] = reading.value;
    }
    for (let n = 1; n <= MAX_IMAGES_PER_VARIANT; n++) {
      const image: Record<string, unknown> = {};
      const index = variant.images.length;
      for (const part of ['url', 'angle'] as const) {
        const column = imageColumn(n, part);
        const reading = readCell(column, cell(column));
        if ('error' in reading) {
          variant.errors.push({ path: `images[${index}].${part}`, column, message: reading.error });
          image[part] = null;
        } else if (!reading.absent) {
          image[part] = reading.value;
        }
      }
      if (Object.keys(image).length > 0) variant.images.push({ n, image });
    }
    const sku = variant.fields.sku;
    variant.sku = typeof sku === 'string' ? sku : null;
    const base = variant.sku === null ? undefined : group.variants.find((v) => v.sku === variant.sku);
    if (base === undefined) group.variants.push(variant);
    else group.parts.push({ variant, base });
  }
}

/** The items of a product: the first with one variant per sku, then one per row that repeated a sku. */
function itemsOf(group: ProductGroup): SheetItem[] {
  const items = [itemOf(group, group.variants)];
  for (const { variant, base } of group.parts) {
    // A row continuing a variant (more than 10 images, docs/reference.md §11.4) leaves the variant's other cells
    // empty: they come from the variant's first row, and any it does fill take their place.
    items.push(itemOf(group, [{ ...variant, fields: { ...base.fields, ...variant.fields } }]));
  }
  return items;
}

function itemOf(group: ProductGroup, variants: readonly VariantRow[]): SheetItem {
  const item = {
    ...group.fields,
    variants: variants.map((variant) => {
      const out: Record<string, unknown> = { ...variant.fields };
      if (variant.images.length > 0) out.images = variant.images.map(({ image }) => image);
      return out;
    }),
  };
  const cellErrors: CellError[] = [
    ...group.errors.map(({ path, message }) => ({ field: path, code: 'invalid_type', message })),
    ...variants.flatMap((variant, i) =>
      variant.errors.map(({ path, message }) => ({
        field: `variants[${i}].${path}`,
        code: 'invalid_type',
        message,
      })),
    ),
  ];
  const row = variants[0]?.row ?? group.row;
  const externalId = group.fields.external_id;
  return {
    text: JSON.stringify(item),
    externalId: typeof externalId === 'string' ? externalId : null,
    cellErrors,
    row,
    locate: (field) => locate(field, group.row, variants),
  };
}

/** The row and column `field` of an item points at (see `SheetItem.locate`). */
function locate(field: string, productRow: number, variants: readonly VariantRow[]): CellPlace {
  const match = VARIANT_PATH.exec(field);
  if (match === null) {
    const column = (PRODUCT_COLUMNS as readonly string[]).includes(field) ? field : null;
    // `variants` itself (none, or too few) is about the variant cells of the product's first row.
    return { row: productRow, column: field === 'variants' ? 'sku' : column };
  }
  const [, index, name, imageIndex, imagePart] = match;
  const variant = variants[Number(index)];
  const row = variant?.row ?? productRow;
  if (name === undefined) return { row, column: 'sku' };
  if (name !== 'images') {
    const column = VARIANT_COLUMNS.find((c) => variantField(c) === name);
    return { row, column: column ?? null };
  }
  const n = imageIndex === undefined ? 1 : (variant?.images[Number(imageIndex)]?.n ?? Number(imageIndex) + 1);
  return { row, column: imageColumn(n, imagePart === 'angle' ? 'angle' : 'url') };
}

/** An error of an item with the row and column its field points at (docs/reference.md §11.5). */
export type PlacedError<E extends { field: string }> = E & { row: number; column: string | null };

/** `errors` of a spreadsheet's item, each with the row and column of its `field`. */
export function placeErrors<E extends { field: string }>(
  errors: readonly E[],
  locate: SheetItem['locate'],
): Array<PlacedError<E>> {
  return errors.map((error) => ({ ...error, ...locate(error.field) }));
}
