import { JsonStreamError, splitJsonArray } from '../../../src/client/json-splitter.ts';

/** One item of a dropped file, at its 0-based `position`: its JSON text, or why it is not JSON. */
export type FileItem =
  | { position: number; line: number; text: string; malformed?: undefined }
  | { position: number; line: number; text?: undefined; malformed: string };

/** JSON Lines by extension, as the command-line client decides (docs/cli.md); anything else is JSON. */
export function isJsonLines(file: File): boolean {
  return /\.(jsonl|ndjson)$/i.test(file.name);
}

/** Work done between two yields to the page, so that input and painting are never held up longer. */
const SLICE_MS = 30;

/** Lets the page handle input and paint: a new task, not a microtask (which would run first). */
function yieldToPage(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The file's text a chunk at a time (File.stream() decoded as UTF-8): the file is never held whole.
 * A read of data already there resolves as a microtask, so a fast file would be read to its end in one
 * task; the reader yields to the page every SLICE_MS instead, which keeps a 50 MB file from freezing it.
 */
async function* textChunks(file: File): AsyncGenerator<string> {
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
  let sliceStart = performance.now();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
      if (performance.now() - sliceStart > SLICE_MS) {
        await yieldToPage();
        sliceStart = performance.now();
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** Why `text` is not one JSON value, or undefined when it is. */
function jsonDefect(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

async function* jsonLines(file: File): AsyncGenerator<FileItem> {
  let rest = '';
  let line = 0;
  let position = 0;
  const item = (raw: string): FileItem | null => {
    line++;
    const text = raw.trim();
    if (text === '') return null;
    const malformed = jsonDefect(text);
    const found: FileItem =
      malformed === undefined ? { position, line, text } : { position, line, malformed };
    position++;
    return found;
  };
  for await (const chunk of textChunks(file)) {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop()!;
    for (const raw of lines) {
      const found = item(raw);
      if (found) yield found;
    }
  }
  const last = item(rest);
  if (last) yield last;
}

async function* jsonArray(file: File): AsyncGenerator<FileItem> {
  let position = 0;
  try {
    // The same splitter as the command-line client: the array is cut into element texts without
    // parsing the document, and each element is checked on its own.
    for await (const { text, line } of splitJsonArray(textChunks(file))) {
      const malformed = jsonDefect(text);
      yield malformed === undefined ? { position, line, text } : { position, line, malformed };
      position++;
    }
  } catch (error) {
    if (error instanceof JsonStreamError && error.looksLikeJsonLines)
      throw new Error(`${error.message}: if the file is JSON Lines, give it a .jsonl name`, { cause: error });
    throw error;
  }
}

/** The items of a JSON (array or `{"items": [...]}`) or JSON Lines file, streamed. */
export function readFileItems(file: File): AsyncGenerator<FileItem> {
  return isJsonLines(file) ? jsonLines(file) : jsonArray(file);
}

/** The items in groups of at most `size` (a submission's limit is 1000). */
export async function* inGroups<T>(items: AsyncIterable<T>, size: number): AsyncGenerator<T[]> {
  let group: T[] = [];
  for await (const item of items) {
    group.push(item);
    if (group.length === size) {
      yield group;
      group = [];
    }
  }
  if (group.length > 0) yield group;
}
