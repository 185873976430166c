/** Work done between two yields to the page, so that input and painting are never held up longer. */
const SLICE_MS = 30;

/** The most text handed on at once. */
const PIECE_CHARS = 16 * 1024;

/** Lets the page handle input and paint: a new task, not a microtask (which would run first). */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The file's text a chunk at a time (File.stream() decoded as UTF-8): the file is never held whole.
 * A read of data already there resolves as a microtask, so a fast file would be read to its end in one
 * task; the reader yields to the page every SLICE_MS instead, which keeps a 50 MB file from freezing
 * it. The time counted includes what the consumer does with each chunk (splitting JSON, parsing CSV,
 * converting rows), since it runs between two reads.
 */
export async function* textChunks(file: File): AsyncGenerator<string> {
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
  let sliceStart = performance.now();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
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
  } finally {
    // Stopped early (a layout error, the errors found): cancelling frees the file's stream too.
    await reader.cancel();
  }
}
