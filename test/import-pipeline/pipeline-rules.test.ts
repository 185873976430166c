import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { batchesOf, MAX_BATCH_ITEMS, utf8Length } from '../../src/import-pipeline/batches.ts';
import { ErrorPlaces, placeFailedItems } from '../../src/import-pipeline/error-places.ts';
import { jsonLineItems, unsentErrors, type SourceItem } from '../../src/import-pipeline/file-items.ts';
import { partKey } from '../../src/import-pipeline/idempotency-keys.ts';
import { previewItems } from '../../src/import-pipeline/preview-items.ts';
import { retryAfterMs } from '../../src/import-pipeline/retry-after.ts';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function* chunks(...texts: string[]) {
  yield* texts;
}

void describe('the import pipeline’s rules, one for the command line and the dashboard', () => {
  void test('blank lines: JSON white space and a BOM are cut, CRLF and a lone CR end lines, across chunks', async () => {
    const items = await collect(jsonLineItems(chunks('\uFEFF{"a":1}\r', '\n \t\r\n', '{"b":2}\r{"c":3}\n')));
    assert.deepEqual(items, [
      { position: 0, line: 1, text: '{"a":1}' },
      { position: 1, line: 3, text: '{"b":2}' },
      { position: 2, line: 4, text: '{"c":3}' },
    ]);
  });

  void test('a line that is not JSON is an item never sent, with malformed_json at its line; a no-break space is not blank', async () => {
    const items = await collect(jsonLineItems(chunks('{"a":1}\n{"a" 1}\n\u00a0\n')));
    assert.deepEqual(
      items.map((item) => [item.position, item.line, item.text ?? 'malformed']),
      [
        [0, 1, '{"a":1}'],
        [1, 2, 'malformed'],
        [2, 3, 'malformed'],
      ],
    );
    const errors = unsentErrors(items[1] as SourceItem & { text?: undefined });
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.code, 'malformed_json');
    assert.match(errors[0]!.message, /^The item at line 2 is not valid JSON: /);
  });

  void test('batches: at most 1000 items whatever is asked, and the byte limit counted in UTF-8', async () => {
    async function* items(count: number, text: string) {
      for (let position = 0; position < count; position++) yield { position, text };
    }
    const big = await collect(batchesOf(items(2001, '1'), { size: 5000 }));
    assert.deepEqual(
      big.map((batch) => batch.texts.length),
      [MAX_BATCH_ITEMS, MAX_BATCH_ITEMS, 1],
    );
    assert.equal(utf8Length('aé€😀'), 1 + 2 + 3 + 4);
    assert.equal(utf8Length('\ud800x'), 3 + 1);
    // `"€"` is 5 bytes in UTF-8 (6 with its comma): two fit 12, a third does not.
    const cut = await collect(batchesOf(items(3, '"€"'), { maxBytes: 12 }));
    assert.deepEqual(
      cut.map((batch) => batch.positions),
      [[0, 1], [2]],
    );
  });

  void test('keys: the run id with the part’s first position and size', () => {
    assert.equal(partKey('r', { positions: [1000, 1001], texts: [] }), 'ingest-r-1000-2');
  });

  void test('429 waits: Retry-After in seconds or as an HTTP date, 1 s when absent or odd', () => {
    assert.equal(retryAfterMs('2'), 2000);
    assert.equal(retryAfterMs(undefined), 1000);
    assert.equal(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', Date.parse('2026-01-01T00:00:00Z')), 5000);
  });

  void test('error placement: a spreadsheet item’s errors name row and column, read once or again', async () => {
    const locate = (field: string) => ({ row: 7, column: field === 'name' ? 'name' : null });
    const sheet: SourceItem[] = [
      { position: 0, line: 2, text: '{}' },
      { position: 1, line: 7, text: '{}', locate },
    ];
    const error = { field: 'name', code: 'required', message: 'name is required' };
    const places = new ErrorPlaces();
    for (const item of sheet) places.remember(item);
    assert.deepEqual(places.place(1, [error]), [{ ...error, row: 7, column: 'name' }]);
    places.forget([1]);
    assert.deepEqual(places.place(1, [error]), [error]);
    async function* again() {
      yield* sheet;
    }
    assert.deepEqual(await placeFailedItems(again(), [{ position: 1, errors: [error] }]), [
      { position: 1, errors: [{ ...error, row: 7, column: 'name' }] },
    ]);
  });

  void test('preview: a line not JSON is invalid and never asked; verdicts come back at their positions, placed', async () => {
    const locate = (field: string) => ({ row: 4, column: field === 'name' ? 'name' : null });
    async function* items(): AsyncGenerator<SourceItem> {
      yield { position: 0, line: 1, text: '{"external_id":"a"}' };
      yield { position: 1, line: 2, malformed: 'Unexpected token' };
      yield { position: 2, line: 4, text: '{"external_id":"b"}', locate };
    }
    const bodies: string[] = [];
    const error = { field: 'name', code: 'required', message: 'name is required' };
    const ask = (body: string) => {
      bodies.push(body);
      return Promise.resolve({
        data: [
          { external_id: 'a', action: 'create', errors: [] },
          { external_id: 'b', action: 'invalid', errors: [error] },
        ],
      });
    };
    const settled = (await collect(previewItems(items(), ask))).flat();
    assert.deepEqual(bodies, ['{"items":[{"external_id":"a"},{"external_id":"b"}]}']);
    assert.deepEqual(
      settled.map((item) => [item.kind, item.position, item.line]),
      [
        ['unsent', 1, 2],
        ['previewed', 0, 1],
        ['previewed', 2, 4],
      ],
    );
    const unsent = settled[0]!;
    assert.equal(unsent.kind === 'unsent' && unsent.errors[0]!.code, 'malformed_json');
    const placed = settled[2]!;
    assert.deepEqual(placed.kind === 'previewed' && placed.entry.errors, [
      { ...error, row: 4, column: 'name' },
    ]);
  });
});
