import { placeErrors, type SheetItem } from '../spreadsheets/sheet-items.ts';
import type { SourceItem } from './file-items.ts';

type Locate = SheetItem['locate'];

/**
 * Error placement: a batch's item errors name the item's index in the batch and a field; an import
 * names the file's place instead (the position, a line or a spreadsheet's row and column,
 * docs/spreadsheets.md#errors). The batch's positions give the item; its `locate` the row and column.
 */

/** The file position of a batch's item `index`, -1 when the batch has no such item. */
export const positionOf = (positions: readonly number[], index: number): number => positions[index] ?? -1;

/**
 * Where the fields of a spreadsheet's items in flight are, by position, kept from their reading until
 * their errors are written (the command line, which reads the file once while sending it).
 */
export class ErrorPlaces {
  readonly #places = new Map<number, Locate>();

  /** Keeps where `item`'s fields are, when it is a spreadsheet's. */
  remember(item: SourceItem): void {
    if (item.locate !== undefined) this.#places.set(item.position, item.locate);
  }

  /** `errors` of the item at `position`, each with its row and column when the item has them. */
  place<E extends { field: string }>(position: number, errors: readonly E[]): E[] {
    const locate = this.#places.get(position);
    return locate === undefined ? [...errors] : placeErrors(errors, locate);
  }

  /** Forgets the items at `positions`, once their errors are written. */
  forget(positions: Iterable<number>): void {
    for (const position of positions) this.#places.delete(position);
  }
}

/**
 * Places the errors of failed items by reading the file's items again (the dashboard, which would
 * otherwise hold every item's cells while its batches run): only the failed items' `locate` is kept.
 */
export async function placeFailedItems<T extends { position: number; errors: Array<{ field: string }> }>(
  items: AsyncIterable<SourceItem>,
  failed: T[],
): Promise<T[]> {
  const wanted = new Set(failed.map((item) => item.position));
  const places = new Map<number, Locate>();
  if (wanted.size > 0) {
    for await (const item of items) {
      if (wanted.has(item.position) && item.locate !== undefined) places.set(item.position, item.locate);
      if (places.size === wanted.size) break;
    }
  }
  return failed.map((item) => {
    const locate = places.get(item.position);
    return locate === undefined ? item : { ...item, errors: placeErrors(item.errors, locate) };
  });
}
