import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { setImmediate as tick } from 'node:timers/promises';
import { withFirstChunkMade } from '../../src/export/first-chunk-made.ts';

/**
 * The export's body with its first chunk made before the headers (src/export/first-chunk-made.ts):
 * a failure before the first chunk is thrown to the route, every chunk comes out in order, and a
 * stream destroyed before it was read still ends the writer (its `finally` runs: the XLSX writer
 * removes its temporary file there).
 */

/** A writer of `chunks` that records how far it got and whether its `finally` ran. */
function writer(chunks: string[], failFirst = false) {
  const seen = { made: 0, ended: false };
  async function* write(): AsyncGenerator<string> {
    try {
      if (failFirst) throw new Error('no temporary folder');
      for (const chunk of chunks) {
        seen.made += 1;
        yield chunk;
      }
    } finally {
      seen.ended = true;
    }
  }
  return { seen, chunks: write() };
}

void test('the first chunk is made at once; read on, every chunk comes in order', async () => {
  const { seen, chunks } = writer(['a', 'b', 'c']);
  const started = await withFirstChunkMade(chunks);
  assert.deepEqual(seen, { made: 1, ended: false });
  const read: string[] = [];
  for await (const chunk of started) read.push(chunk);
  assert.deepEqual(read, ['a', 'b', 'c']);
  assert.deepEqual(seen, { made: 3, ended: true });
});

void test('a failure before the first chunk is thrown by withFirstChunkMade itself', async () => {
  const { seen, chunks } = writer(['a'], true);
  await assert.rejects(withFirstChunkMade(chunks), /no temporary folder/);
  assert.equal(seen.ended, true);
});

void test('a stream destroyed before it is read still ends the writer', async () => {
  const { seen, chunks } = writer(['a', 'b', 'c']);
  const stream = Readable.from(await withFirstChunkMade(chunks), { objectMode: false });
  stream.destroy();
  for (let i = 0; i < 10 && !seen.ended; i++) await tick();
  assert.deepEqual(seen, { made: 1, ended: true });
});

void test('an empty writer gives an empty body', async () => {
  const { seen, chunks } = writer([]);
  const read: string[] = [];
  for await (const chunk of await withFirstChunkMade(chunks)) read.push(chunk);
  assert.deepEqual(read, []);
  assert.equal(seen.ended, true);
});
