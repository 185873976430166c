/** A structural defect in a JSON document, with where it is (1-based line and column). */
export class JsonStreamError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
    /** The defect is what JSON Lines read as one JSON document runs into: a second value, a foreign key. */
    readonly looksLikeJsonLines = false,
  ) {
    super(`${reason} at line ${line}, column ${column}`);
  }
}

/** One element of the top-level array: its JSON text (outer whitespace removed) and its first line. */
export interface JsonElement {
  text: string;
  line: number;
}

type State =
  | 'start'
  | 'objectKey'
  | 'key'
  | 'colon'
  | 'itemsValue'
  | 'firstElement'
  | 'nextElement'
  | 'element'
  | 'objectEnd'
  | 'trailing';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const NEWLINE = 0x0a;
const BOM = 0xfeff;
const TRAILING_WHITESPACE = /[ \t\n\r]+$/;

const isWhitespace = (c: number) => c === 0x20 || c === NEWLINE || c === 0x0d || c === 0x09;
const shown = (c: number) => JSON.stringify(String.fromCharCode(c));

/**
 * Splits a JSON document that is a top-level array, or an object `{"items": [...]}`, into the text of
 * each element, fed a chunk at a time, so that a file of any size is read holding one chunk and one
 * element. It tracks strings, escapes and bracket nesting only: the elements themselves are not parsed
 * (the caller checks each with `JSON.parse`), but the structure around them is checked exactly.
 */
export class JsonArraySplitter {
  #state: State = 'start';
  #wrapped = false;
  /** Closing brackets expected inside the current element, innermost last. */
  #closers: number[] = [];
  #inString = false;
  #escaped = false;
  /** Pieces of the element (or key) that began in an earlier chunk. */
  #parts: string[] = [];
  #line = 1;
  #column = 0;
  #elementLine = 1;
  #seenAny = false;

  /** A defect found by `push`, thrown by the next call so that the elements before it come out first. */
  #defect: JsonStreamError | undefined;

  /** Feeds the next chunk; returns the elements it completed, in order. */
  push(chunk: string): JsonElement[] {
    if (this.#defect) throw this.#defect;
    const out: JsonElement[] = [];
    try {
      this.#scan(chunk, out);
    } catch (error) {
      if (!(error instanceof JsonStreamError) || out.length === 0) throw error;
      this.#defect = error;
    }
    return out;
  }

  #scan(chunk: string, out: JsonElement[]): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (c === NEWLINE) {
        this.#line++;
        this.#column = 0;
      } else {
        this.#column++;
      }

      if (this.#state === 'element') {
        if (this.#inString) {
          if (this.#escaped) this.#escaped = false;
          else if (c === BACKSLASH) this.#escaped = true;
          else if (c === QUOTE) this.#inString = false;
        } else if (c === QUOTE) {
          this.#inString = true;
        } else if (c === OPEN_BRACKET) {
          this.#closers.push(CLOSE_BRACKET);
        } else if (c === OPEN_BRACE) {
          this.#closers.push(CLOSE_BRACE);
        } else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) {
          if (this.#closers.length > 0) {
            if (this.#closers.pop() !== c) this.#fail(`unexpected ${shown(c)}`);
          } else if (c === CLOSE_BRACKET) {
            out.push(this.#take(chunk.slice(start, i)));
            this.#state = this.#wrapped ? 'objectEnd' : 'trailing';
          } else {
            this.#fail(`unexpected ${shown(c)}`);
          }
        } else if (c === COMMA && this.#closers.length === 0) {
          out.push(this.#take(chunk.slice(start, i)));
          this.#state = 'nextElement';
        }
        continue;
      }

      if (this.#state === 'key') {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === QUOTE) this.#checkKey(this.#parts.join('') + chunk.slice(start, i));
        continue;
      }

      if (isWhitespace(c) || (c === BOM && !this.#seenAny)) continue;
      this.#seenAny = true;
      switch (this.#state) {
        case 'start':
          if (c === OPEN_BRACKET) this.#state = 'firstElement';
          else if (c === OPEN_BRACE) this.#state = 'objectKey';
          else this.#fail(`expected "[" or {"items": [...]} but found ${shown(c)}`);
          break;
        case 'objectKey':
          this.#expect(c, QUOTE, 'expected the property "items"', 'key');
          this.#wrapped = true;
          start = i + 1;
          break;
        case 'colon':
          this.#expect(c, COLON, `expected ":" but found ${shown(c)}`, 'itemsValue');
          break;
        case 'itemsValue':
          this.#expect(c, OPEN_BRACKET, '"items" must be an array', 'firstElement');
          break;
        case 'firstElement':
        case 'nextElement':
          if (c === CLOSE_BRACKET && this.#state === 'firstElement') {
            this.#state = this.#wrapped ? 'objectEnd' : 'trailing';
            break;
          }
          if (c === COMMA || c === CLOSE_BRACKET) this.#fail(`expected a value but found ${shown(c)}`);
          // Read this character again as the element's first.
          this.#state = 'element';
          this.#elementLine = this.#line;
          start = i;
          i--;
          this.#column--;
          break;
        case 'objectEnd':
          this.#expect(c, CLOSE_BRACE, 'the top-level object may only hold "items"', 'trailing');
          break;
        case 'trailing':
          this.#fail(`unexpected ${shown(c)} after the array`, c === OPEN_BRACE || c === OPEN_BRACKET);
          break;
      }
    }
    if (this.#state === 'element' || this.#state === 'key') this.#parts.push(chunk.slice(start));
  }

  /** Declares the input complete; throws if the document stopped before its end. */
  end(): void {
    if (this.#defect) throw this.#defect;
    if (this.#state === 'trailing') return;
    if (!this.#seenAny) this.#fail('empty input: expected a JSON array');
    this.#fail(this.#inString || this.#state === 'key' ? 'unterminated string' : 'unexpected end of input');
  }

  #take(tail: string): JsonElement {
    const text = (this.#parts.length > 0 ? this.#parts.join('') + tail : tail).replace(
      TRAILING_WHITESPACE,
      '',
    );
    this.#parts = [];
    return { text, line: this.#elementLine };
  }

  #checkKey(raw: string): void {
    this.#parts = [];
    let key: unknown;
    try {
      key = JSON.parse(`"${raw}"`);
    } catch {
      this.#fail('malformed property name');
    }
    if (key !== 'items') {
      this.#fail(
        `unexpected property ${JSON.stringify(key)}: the top-level object may only hold "items"`,
        true,
      );
    }
    this.#state = 'colon';
  }

  /** A fixed character of the `{"items": [...]}` envelope: `wanted`, then the parse goes on in `next`. */
  #expect(c: number, wanted: number, reason: string, next: State): void {
    if (c !== wanted) this.#fail(reason);
    this.#state = next;
  }

  #fail(reason: string, looksLikeJsonLines = false): never {
    throw new JsonStreamError(reason, this.#line, this.#column, looksLikeJsonLines);
  }
}

/** Yields each element of the top-level array read from `chunks`, holding one chunk at a time. */
export async function* splitJsonArray(chunks: AsyncIterable<string>): AsyncGenerator<JsonElement> {
  const splitter = new JsonArraySplitter();
  for await (const chunk of chunks) yield* splitter.push(chunk);
  splitter.end();
}
