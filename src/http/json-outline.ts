/**
 * Checking a JSON body without building it. A 2 MB submission parsed with `JSON.parse` becomes tens
 * of thousands of objects that the API only counts before storing the text, and that garbage then
 * competes for memory and CPU with the worker. The scanner here accepts exactly what `JSON.parse`
 * accepts (RFC 8259) and returns the body's outline instead of its value.
 */

/** The text is not JSON; `offset` is the byte where it stops being JSON (the length: it ended early). */
export class JsonSyntaxError extends Error {
  constructor(readonly offset: number) {
    super(`Not JSON from byte ${offset}`);
  }
}

/**
 * The 1-based line and column of byte `offset` of UTF-8 `bytes`, as an editor shows them: lines
 * end at `\n`, and a column counts characters, not bytes.
 */
export function lineAndColumn(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = bytes.indexOf(0x0a); i !== -1 && i < offset; i = bytes.indexOf(0x0a, i + 1)) {
    line++;
    lineStart = i + 1;
  }
  let column = 1;
  // Continuation bytes (10xxxxxx) belong to the character before them.
  for (let i = lineStart; i < offset; i++) if ((bytes[i]! & 0xc0) !== 0x80) column++;
  return { line, column };
}

/** The text is JSON but nests containers deeper than allowed. */
export class JsonTooDeepError extends Error {
  constructor(
    message: string,
    /** The top-level object's member the nesting is in; null when the top level is not an object. */
    readonly member: string | null,
  ) {
    super(message);
  }
}

const OBJECT = 1;
const ARRAY = 2;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isWhitespace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const isDigit = (b: number) => b >= ZERO && b <= NINE;
const isHexDigit = (b: number) =>
  (b >= ZERO && b <= NINE) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
/** The characters that may follow a backslash, besides `u`: " \ / b f n r t. */
const SIMPLE_ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const LITERALS: Record<number, Uint8Array> = {
  0x74: new TextEncoder().encode('true'),
  0x66: new TextEncoder().encode('false'),
  0x6e: new TextEncoder().encode('null'),
};

/** What a member of the top-level value is, as far as the outline keeps it. */
interface Member {
  value: unknown;
  /** Elements counted so far, when the member is an array. */
  length: number;
}

/*
 * The scanning functions take a position and return the position after what they scanned, or, where
 * the text stops being JSON, that position's bitwise complement (`~at`, always negative). Positions live in locals rather than in a shared closure
 * variable so that the byte loops stay in registers: that makes the scan several times faster.
 */

function skipWhitespace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isWhitespace(bytes[i]!)) i++;
  return i;
}

/** Scans the string whose opening quote is at `i`; returns the position of its closing quote. */
function scanString(bytes: Uint8Array, i: number): number {
  const n = bytes.length;
  for (i++; i < n;) {
    const b = bytes[i]!;
    if (b === QUOTE) return i;
    if (b === BACKSLASH) {
      const next = bytes[i + 1] ?? -1;
      if (SIMPLE_ESCAPES.has(next)) i += 2;
      else if (next === 0x75) {
        for (let k = 2; k < 6; k++) if (!isHexDigit(bytes[i + k] ?? -1)) return ~Math.min(i + k, n);
        i += 6;
      } else return ~Math.min(i + 1, n);
    } else if (b < 0x20) return ~i;
    else i++;
  }
  return ~n;
}

function scanDigits(bytes: Uint8Array, i: number): number {
  if (!isDigit(bytes[i] ?? -1)) return ~i;
  while (i < bytes.length && isDigit(bytes[i]!)) i++;
  return i;
}

function scanNumber(bytes: Uint8Array, i: number): number {
  if (bytes[i] === MINUS) i++;
  if (bytes[i] === ZERO) i++;
  else if ((i = scanDigits(bytes, i)) < 0) return i;
  if (bytes[i] === DOT && (i = scanDigits(bytes, i + 1)) < 0) return i;
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i++;
    if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
    i = scanDigits(bytes, i);
  }
  return i;
}

/**
 * The open containers, innermost last, one byte each: a body of 64 MiB of `[` is legal input up to
 * its end, and a plain array would hold 8 bytes per level.
 */
class ContainerStack {
  private kinds = new Uint8Array(64);
  depth = 0;

  push(kind: number): void {
    if (this.depth === this.kinds.length) {
      const grown = new Uint8Array(this.kinds.length * 2);
      grown.set(this.kinds);
      this.kinds = grown;
    }
    this.kinds[this.depth++] = kind;
  }

  pop(): void {
    this.depth--;
  }

  /** The container at `level` (0 is the top-level one). */
  at(level: number): number {
    return this.kinds[level]!;
  }

  /** The innermost open container, or 0 when none is open. */
  top(): number {
    return this.depth === 0 ? 0 : this.kinds[this.depth - 1]!;
  }
}

/**
 * Scans UTF-8 JSON `bytes` and returns its outline: the top-level value with each member (an object's
 * property or an array's element) replaced by a stand-in of the same JSON type — `""`, `0`, `true`,
 * `false`, `null`, `{}`, or an array of as many `null`s as the member has elements. Keys keep their
 * order and, as with `JSON.parse`, the last of duplicate keys wins. Enough to validate an envelope
 * such as `{items: [...]}` with its schema; everything deeper stays in the bytes.
 *
 * Arrays longer than `maxArrayLength` (the top-level one, or a member) are outlined with
 * `maxArrayLength + 1` elements: enough for a schema's `maxItems` to refuse them, without a stand-in
 * for each of the millions of elements a large body can hold.
 *
 * Throws `JsonSyntaxError` for text `JSON.parse` would refuse and, for valid text only,
 * `JsonTooDeepError` when containers nest deeper than `maxDepth` (the top-level container is 1).
 */
export function outlineJson(
  bytes: Uint8Array,
  { maxDepth, maxArrayLength = Number.MAX_SAFE_INTEGER }: { maxDepth: number; maxArrayLength?: number },
): unknown {
  const n = bytes.length;
  const stack = new ContainerStack();
  let i = 0;
  let tooDeep = false;
  let deepMember: string | null = null;

  // The outline being collected: the top-level value, and the member being read.
  let top: unknown;
  const topMembers = new Map<string, Member>();
  const topElements: Member[] = [];
  let key = '';
  let member: Member | null = null;

  const fail = (at: number): never => {
    throw new JsonSyntaxError(Math.min(at, n));
  };

  /** Scans an object's key and its colon from `at`; a key of the top-level object is decoded. */
  const scanKey = (at: number): number => {
    at = skipWhitespace(bytes, at);
    if (bytes[at] !== QUOTE) fail(at);
    const end = scanString(bytes, at);
    if (end < 0) fail(~end);
    if (stack.depth === 1) key = JSON.parse(new TextDecoder().decode(bytes.subarray(at, end + 1))) as string;
    at = skipWhitespace(bytes, end + 1);
    if (bytes[at] !== COLON) fail(at);
    return at + 1;
  };

  /** Notes a value of the JSON type of `standIn` starting at the current depth. */
  const noteValue = (standIn: unknown) => {
    const depth = stack.depth;
    if (depth === 0) top = standIn;
    else if (depth === 1) {
      member = { value: standIn, length: 0 };
      if (stack.at(0) === OBJECT) topMembers.set(key, member);
      else if (topElements.length <= maxArrayLength) topElements.push(member);
    } else if (depth === 2 && stack.at(1) === ARRAY && member && member.length <= maxArrayLength) {
      member.length++;
    }
  };

  i = skipWhitespace(bytes, i);
  for (;;) {
    // A value starts at i.
    const b = bytes[i] ?? -1;
    if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      noteValue(b === OPEN_BRACE ? {} : []);
      stack.push(b === OPEN_BRACE ? OBJECT : ARRAY);
      if (stack.depth > maxDepth && !tooDeep) {
        tooDeep = true;
        deepMember = stack.depth > 1 && stack.at(0) === OBJECT ? key : null;
      }
      i = skipWhitespace(bytes, i + 1);
      if (bytes[i] !== (b === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)) {
        if (b === OPEN_BRACE) i = scanKey(i);
        i = skipWhitespace(bytes, i);
        continue;
      }
      stack.pop();
      i++;
    } else if (b === QUOTE) {
      noteValue('');
      const end = scanString(bytes, i);
      if (end < 0) fail(~end);
      i = end + 1;
    } else if (b === MINUS || isDigit(b)) {
      noteValue(0);
      if ((i = scanNumber(bytes, i)) < 0) fail(~i);
    } else {
      const literal = LITERALS[b] ?? fail(i);
      for (let k = 0; k < literal.length; k++) if (bytes[i + k] !== literal[k]) fail(i + k);
      noteValue(b === 0x74 ? true : b === 0x66 ? false : null);
      i += literal.length;
    }

    // After a value: close containers until one goes on with a comma, or the text ends.
    for (;;) {
      i = skipWhitespace(bytes, i);
      const container = stack.top();
      if (container === 0) {
        if (i < n) fail(i);
        if (tooDeep)
          throw new JsonTooDeepError(`JSON nesting is deeper than ${maxDepth} levels.`, deepMember);
        return buildOutline(top, topMembers, topElements);
      }
      const c = bytes[i];
      if (c === COMMA) {
        i++;
        if (container === OBJECT) i = scanKey(i);
        i = skipWhitespace(bytes, i);
        break;
      }
      if (c !== (container === OBJECT ? CLOSE_BRACE : CLOSE_BRACKET)) fail(i);
      stack.pop();
      i++;
    }
  }
}

function standInFor(member: Member): unknown {
  return Array.isArray(member.value) ? new Array<null>(member.length).fill(null) : member.value;
}

function buildOutline(top: unknown, members: Map<string, Member>, elements: Member[]): unknown {
  if (Array.isArray(top)) return elements.map(standInFor);
  if (top === null || typeof top !== 'object') return top;
  const outline: Record<string, unknown> = {};
  for (const [key, member] of members) {
    // defineProperty, as JSON.parse does: a "__proto__" key is an own property, not the prototype.
    Object.defineProperty(outline, key, {
      value: standInFor(member),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return outline;
}
