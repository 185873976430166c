import type { SheetRow } from './csv-rows.ts';
import { SheetItemReader, type SheetItem } from './sheet-items.ts';
import { SheetLayoutError } from './sheet-layout.ts';

/**
 * The items of a spreadsheet's rows (docs/reference.md §11.5), in file order, one product at a time; throws
 * `SheetLayoutError` at the first layout defect (before the items after it, not before those ahead
 * of it: `checkSheet` is the pass that refuses a file before anything is sent). With `layoutOnly`,
 * it checks the layout and yields nothing (`SheetItemReader`).
 */
export async function* sheetItems(
  rows: AsyncIterable<SheetRow>,
  { layoutOnly = false }: { layoutOnly?: boolean } = {},
): AsyncGenerator<SheetItem> {
  let reader: SheetItemReader | null = null;
  for await (const { row, cells } of rows) {
    if (reader === null) {
      reader = new SheetItemReader(cells, { layoutOnly });
      continue;
    }
    yield* reader.push(cells, row);
  }
  if (reader === null)
    throw new SheetLayoutError('the file is empty: it needs a header row', 1, 'external_id');
  yield* reader.end();
}

/** The items of a spreadsheet's rows (`sheetItems`), each with its 0-based position among them. */
export async function* numberedSheetItems(
  rows: AsyncIterable<SheetRow>,
): AsyncGenerator<SheetItem & { position: number }> {
  let position = 0;
  for await (const item of sheetItems(rows)) yield { ...item, position: position++ };
}

/**
 * Reads the whole file once, streamed, and throws its first layout defect (`SheetLayoutError`, with
 * row and column). Run before anything is sent, so a refused file leaves the catalog as it was.
 */
export async function checkSheet(rows: AsyncIterable<SheetRow>): Promise<void> {
  for await (const _ of sheetItems(rows, { layoutOnly: true })) {
    // layout only: no items come
  }
}
