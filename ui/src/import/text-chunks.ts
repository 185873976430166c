import { decodeText, type EncodingAdvice } from '../../../src/spreadsheets/text-encoding.ts';

/** Work done between two yields to the page, so that input and painting are never held up longer. */
const SLICE_MS = 30;

/** The most text handed on at once. */
const PIECE_CHARS = 16 * 1024;

/** Lets the page handle input and paint: a new task, not a microtask (which would run first). */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** What a refusal for a byte the file's encoding cannot read tells the dashboard's user. */
export function dashboardEncodingAdvice(format: 'csv' | 'json'): EncodingAdvice {
  return {
    save: format === 'csv' ? 'Save the file as "CSV UTF-8"' : 'Save the file as UTF-8',
    choose: 'choose its encoding',
    chosen: 'Choose the encoding the file is written in',
  };
}

/** The bytes of `blob`, as its stream hands them over. */
async function* blobBytes(blob: Blob): AsyncGenerator<Uint8Array> {
  const reader = blob.stream().getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // Stopped early (a layout error, the errors found): cancelling frees the file's stream too.
    await reader.cancel();
  }
}

/** How a file's bytes become text: the encoding chosen (none: detect), and the advice of a refusal. */
export interface TextOptions {
  encoding?: string | undefined;
  format: 'csv' | 'json';
}

/**
 * The file's text a chunk at a time, decoded fatally (UTF-8, UTF-16 by its byte order mark, or the
 * encoding chosen: docs/spreadsheets.md#encodings); a byte the encoding cannot read throws
 * `TextEncodingError`. The file is never held whole. A read of data already there resolves as a
 * microtask, so a fast file would be read to its end in one task; the reader yields to the page every
 * SLICE_MS instead, which keeps a 50 MB file from freezing it. The time counted includes what the
 * consumer does with each chunk (splitting JSON, parsing CSV, converting rows), since it runs between
 * two reads.
 */
export async function* textChunks(file: Blob, options: TextOptions): AsyncGenerator<string> {
  const text = decodeText(blobBytes(file), {
    encoding: options.encoding,
    advice: dashboardEncodingAdvice(options.format),
  });
  let sliceStart = performance.now();
  for await (const value of text) {
    // A chunk can be large (a file on disk comes in pieces of any size): cut, so that the work one
    // piece makes (parsing a CSV is the costliest) stays within a slice.
    for (let start = 0; start < value.length; start += PIECE_CHARS) {
      yield value.slice(start, start + PIECE_CHARS);
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToPage();
        sliceStart = performance.now();
      }
    }
  }
}
