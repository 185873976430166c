import type { FieldError } from './problem-answer.ts';
import { batchesOf, envelope, type WellFormedItem } from './batches.ts';
import { ErrorPlaces } from './error-places.ts';
import { unsentErrors, type SourceItem } from './file-items.ts';

/** What a preview entry must have for its errors to be placed: the service's verdict on one item. */
interface PlaceableEntry {
  errors: FieldError[];
  warnings?: FieldError[] | undefined;
}

/** One item of a previewed file, in the order the pipeline settles them. */
export type PreviewedItem<Entry extends PlaceableEntry> = { position: number; line: number } &
  /** Never sent (not JSON, cells that cannot be read): `invalid`, with these errors. */
  (
    | { kind: 'unsent'; malformed: boolean; externalId: string | null; errors: FieldError[] }
    /** The service's verdict, its errors and warnings placed at the file's row and column. */
    | { kind: 'previewed'; entry: Entry }
    /** Sent while the service could not preview (`ask` answered null): no verdict. */
    | { kind: 'unpreviewed' }
  );

/**
 * Preview, the dry run of docs/api.md's `POST /products/ingestions/preview`, as both sides run it:
 * the file's items cut into batches as a submission cuts them (`batchesOf`), each batch asked of the
 * service by `ask` (the side's HTTP; null when it cannot answer, the items then come out
 * `unpreviewed`), each verdict's errors and warnings placed at the item's place in the file. An item
 * that cannot be sent is `invalid` here, with `malformed_json` for a line that is not JSON; it comes
 * out before the verdicts of the batch it was read in, so a side that shows the file in order sorts
 * by position. Each batch is compared with the catalog as stored now. Yields a batch's items at once
 * (an async step per item would cost the page's reading a few microtasks each, 100,000 times).
 */
export async function* previewItems<Entry extends PlaceableEntry>(
  items: AsyncIterable<SourceItem>,
  ask: (body: string) => Promise<{ data: Entry[] } | null>,
  { size }: { size?: number } = {},
): AsyncGenerator<Array<PreviewedItem<Entry>>> {
  const places = new ErrorPlaces();
  const lines = new Map<number, number>();
  const unsent: Array<PreviewedItem<Entry>> = [];
  async function* wellFormed(): AsyncGenerator<WellFormedItem> {
    for await (const item of items) {
      if (item.text !== undefined) {
        places.remember(item);
        lines.set(item.position, item.line);
        yield { position: item.position, text: item.text };
        continue;
      }
      const externalId = item.malformed === undefined ? item.externalId : null;
      unsent.push({
        kind: 'unsent',
        malformed: item.malformed !== undefined,
        position: item.position,
        line: item.line,
        externalId,
        errors: unsentErrors(item),
      });
    }
  }
  for await (const batch of batchesOf(wellFormed(), { size })) {
    const settled = unsent.splice(0);
    const answer = await ask(envelope(batch.texts));
    for (const [index, position] of batch.positions.entries()) {
      const line = lines.get(position) ?? 0;
      lines.delete(position);
      const entry = answer?.data[index];
      if (entry === undefined) {
        settled.push({ kind: 'unpreviewed', position, line });
      } else {
        const { warnings } = entry;
        // Placing adds a row and column to each error, and changes nothing else of the entry.
        const placed: Entry = {
          ...entry,
          errors: places.place(position, entry.errors),
          ...(warnings && { warnings: places.place(position, warnings) }),
        };
        settled.push({ kind: 'previewed', position, line, entry: placed });
      }
      places.forget([position]);
    }
    yield settled;
  }
  if (unsent.length > 0) yield unsent.splice(0);
}
