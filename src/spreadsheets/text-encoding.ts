import { utf8DefectAt } from '../runtime/utf8-defect.ts';

/**
 * How the bytes of a CSV, JSON or JSON Lines file become text (docs/spreadsheets.md#encodings): a
 * byte order mark decides (UTF-8, UTF-16 LE or BE), else the encoding chosen (`--encoding`, the
 * dashboard's choice), else UTF-8. Decoding is fatal and streamed: a byte the encoding cannot read
 * stops the reading with `TextEncodingError`, naming the byte and its offset, never a U+FFFD in its
 * place. The command-line client and the dashboard share this file: no Node.js module here.
 */

/** An encoding's canonical name as `TextDecoder` gives it (`utf-8`, `utf-16le`, `windows-1252`, …). */
export type EncodingName = string;

/** The name a message gives an encoding: `UTF-8`, `UTF-16LE`, or the standard's own (`windows-1252`). */
export function encodingTitle(encoding: EncodingName): string {
  return encoding.startsWith('utf-') ? encoding.toUpperCase() : encoding;
}

/**
 * The encoding a WHATWG label names (`latin1` → `windows-1252`, `utf8` → `utf-8`), or null when
 * `TextDecoder` knows no such label (or only as the "replacement" encoding, which reads nothing).
 */
export function encodingOfLabel(label: string): EncodingName | null {
  try {
    const encoding = new TextDecoder(label.trim()).encoding;
    return encoding === 'replacement' ? null : encoding;
  } catch {
    return null;
  }
}

/** The encoding a byte order mark at the start of `head` names, and the mark's length; null without one. */
export function sniffBom(head: Uint8Array): { encoding: EncodingName; length: number } | null {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  return null;
}

const hex = (byte: number) => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`;

/**
 * Bytes of a file that its encoding cannot read: the first of them (two for UTF-16, a code unit),
 * their 0-based offset in the file, and what to do (`advice`). `where` names the place in the file's
 * own terms once it is known (`line 3`); a spreadsheet names row and column through `SheetLayoutError`.
 */
export class TextEncodingError extends Error {
  constructor(
    readonly bytes: readonly number[],
    readonly offset: number,
    readonly encoding: EncodingName,
    readonly advice: string,
    readonly where = '',
  ) {
    const what = bytes.length === 1 ? `byte ${hex(bytes[0]!)}` : `bytes ${bytes.map(hex).join(' ')}`;
    const problem = `${what} at offset ${offset} is not ${encodingTitle(encoding)}. ${advice}`;
    super(where === '' ? problem : `${where}: ${problem}`);
  }

  /** The same error, naming where it is (`line 12`). */
  at(where: string): TextEncodingError {
    return new TextEncodingError(this.bytes, this.offset, this.encoding, this.advice, where);
  }
}

/** What the refusal of a file that is not in its encoding tells a person to do. */
export interface EncodingAdvice {
  /** How to save it as UTF-8 (`Save the file as "CSV UTF-8"`). */
  save: string;
  /** How to read it in another encoding: `pass --encoding windows-1252`, `choose its encoding`. */
  choose: string;
  /** When an encoding was chosen and the file is not in it either. */
  chosen: string;
}

/** The advice of a refusal: UTF-8 (or UTF-16) found wanting, or the chosen encoding. */
function adviceText(advice: EncodingAdvice, explicit: boolean): string {
  return explicit ? advice.chosen : `${advice.save} or ${advice.choose}`;
}

/** Options of `decodeText`. */
export interface DecodeOptions {
  /** The encoding chosen (a WHATWG label); none: UTF-8 unless a byte order mark says UTF-16. */
  encoding?: string | undefined;
  advice: EncodingAdvice;
}

/** The last bytes handed to the decoder that are kept: enough to hold what it may be holding back. */
const TAIL_BYTES = 4;

/**
 * Bytes at the end of `tail` (the last bytes read) that the decoder holds back, waiting for the rest
 * of a character: the index in `tail` where they start (`tail.length` when it holds none). Only UTF-8
 * and UTF-16 are known exactly; another encoding is taken as holding none, so its defect's offset is
 * found within the chunk where the decoder gave up.
 */
function heldBackFrom(tail: Uint8Array, encoding: EncodingName, read: number): number {
  const length = tail.length;
  if (encoding === 'utf-8') {
    for (let at = length - 1; at >= Math.max(0, length - 3); at--) {
      const byte = tail[at]!;
      if (byte >= 0x80 && byte < 0xc0) continue;
      const needs = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return length - at < needs ? at : length;
    }
    return length;
  }
  if (encoding === 'utf-16le' || encoding === 'utf-16be') {
    // Odd bytes read so far: the last one waits for its pair; before it, a high surrogate waits too.
    let from = read % 2 === 1 ? length - 1 : length;
    const unit = codeUnit(tail, from - 2, encoding === 'utf-16le');
    if (unit !== null && unit >= 0xd800 && unit <= 0xdbff) from -= 2;
    return Math.max(0, from);
  }
  return length;
}

function codeUnit(bytes: Uint8Array, at: number, littleEndian: boolean): number | null {
  if (at < 0 || at + 1 >= bytes.length) return null;
  return littleEndian ? bytes[at]! | (bytes[at + 1]! << 8) : (bytes[at]! << 8) | bytes[at + 1]!;
}

/** The first ill-formed code unit of UTF-16 `bytes`, which start on a unit boundary; -1 when none. */
function utf16DefectAt(bytes: Uint8Array, littleEndian: boolean, complete: boolean): number {
  let at = 0;
  for (; at + 1 < bytes.length; at += 2) {
    const unit = codeUnit(bytes, at, littleEndian)!;
    if (unit >= 0xdc00 && unit <= 0xdfff) return at;
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = codeUnit(bytes, at + 2, littleEndian);
    if (next === null) return complete ? at : -1;
    if (next < 0xdc00 || next > 0xdfff) return at;
    at += 2;
  }
  return complete && at < bytes.length ? at : -1;
}

/** Where in `bytes` (what the decoder held back, then the chunk it failed on) the defect starts. */
function defectAt(bytes: Uint8Array, encoding: EncodingName, complete: boolean): number {
  let at = -1;
  if (encoding === 'utf-8') at = utf8DefectAt(bytes, { complete });
  else if (encoding === 'utf-16le' || encoding === 'utf-16be')
    at = utf16DefectAt(bytes, encoding === 'utf-16le', complete);
  else {
    // A legacy encoding: fed a byte at a time, the decoder gives up at the first it cannot read.
    const probe = new TextDecoder(encoding, { fatal: true, ignoreBOM: true });
    try {
      for (at = 0; at < bytes.length; at++) probe.decode(bytes.subarray(at, at + 1), { stream: true });
      if (complete) probe.decode();
      at = -1;
    } catch {
      at = Math.min(at, bytes.length - 1);
    }
  }
  return at === -1 ? 0 : at;
}

/**
 * The text of `chunks` (bytes, as a file is read), decoded as `options` say (see the top of this
 * file), a piece per chunk. At a byte the encoding cannot read it yields the text before that byte,
 * then throws `TextEncodingError` with the byte's offset in the file: the reader that counts rows or
 * lines has then seen everything up to it. Holds a chunk at a time.
 */
export async function* decodeText(
  chunks: AsyncIterable<Uint8Array>,
  options: DecodeOptions,
): AsyncGenerator<string> {
  const chosen = options.encoding === undefined ? null : encodingOfLabel(options.encoding);
  if (options.encoding !== undefined && chosen === null) {
    throw new RangeError(`${JSON.stringify(options.encoding)} is not an encoding label`);
  }
  let decoder: InstanceType<typeof TextDecoder> | null = null;
  let encoding: EncodingName = 'utf-8';
  /** The first bytes, kept until there are enough to look for a byte order mark. */
  let head: Uint8Array | null = new Uint8Array(0);
  /** The last bytes handed to the decoder (at most TAIL_BYTES), and how many it was handed in all. */
  let tail = new Uint8Array(0);
  let read = 0;
  const keepTail = (chunk: Uint8Array) => {
    read += chunk.length;
    if (chunk.length >= TAIL_BYTES) {
      tail = chunk.slice(chunk.length - TAIL_BYTES);
      return;
    }
    const joined = new Uint8Array(tail.length + chunk.length);
    joined.set(tail);
    joined.set(chunk, tail.length);
    tail = joined.slice(Math.max(0, joined.length - TAIL_BYTES));
  };

  const open = (first: Uint8Array) => {
    const bom = sniffBom(first);
    // A byte order mark wins over a chosen encoding, as in the Encoding Standard's decode.
    encoding = bom?.encoding ?? chosen ?? 'utf-8';
    decoder = new TextDecoder(encoding, { fatal: true });
  };

  /** The text before the defect and the error, once `decoder` gave up on `chunk` (empty: at the end). */
  const failure = (chunk: Uint8Array): { text: string; error: TextEncodingError } => {
    const complete = chunk.length === 0;
    const from = heldBackFrom(tail, encoding, read);
    const pending = tail.subarray(from);
    // A legacy encoding's character cut off by the end: taken to start at the last byte read.
    const held = complete && pending.length === 0 ? tail.subarray(tail.length - 1) : pending;
    const window = new Uint8Array(held.length + chunk.length);
    window.set(held);
    window.set(chunk, held.length);
    const windowStart = read - held.length;
    const at = defectAt(window, encoding, complete);
    const unit = encoding.startsWith('utf-16') ? 2 : 1;
    const bytes = Array.from(window.subarray(at, Math.min(window.length, at + unit)));
    // The text before the defect: the window starts on a character's first byte (a chunk's start
    // for a legacy encoding, taken as holding nothing back), so it decodes on its own.
    const before = new TextDecoder(encoding, { ignoreBOM: windowStart > 0 }).decode(window.subarray(0, at));
    const advice = adviceText(options.advice, chosen !== null && encoding === chosen);
    return { text: before, error: new TextEncodingError(bytes, windowStart + at, encoding, advice) };
  };

  for await (const piece of chunks) {
    let chunk = piece;
    if (head !== null) {
      const joined: Uint8Array = new Uint8Array(head.length + chunk.length);
      joined.set(head);
      joined.set(chunk, head.length);
      if (joined.length < 3) {
        head = joined;
        continue;
      }
      head = null;
      chunk = joined;
      open(chunk);
    }
    let text: string;
    try {
      text = decoder!.decode(chunk, { stream: true });
    } catch {
      const { text: before, error } = failure(chunk);
      if (before !== '') yield before;
      throw error;
    }
    keepTail(chunk);
    if (text !== '') yield text;
  }
  if (head !== null) {
    // A file of fewer than three bytes.
    const first = head;
    head = null;
    open(first);
    let text: string;
    try {
      text = decoder!.decode(first, { stream: true });
    } catch {
      const { text: before, error } = failure(first);
      if (before !== '') yield before;
      throw error;
    }
    keepTail(first);
    if (text !== '') yield text;
  }
  let text: string;
  try {
    text = decoder!.decode();
  } catch {
    const { text: before, error } = failure(new Uint8Array(0));
    if (before !== '') yield before;
    throw error;
  }
  if (text !== '') yield text;
}

/** How many line feeds `chunks` hold: the line of a defect at their end is one more. */
export async function lineFeedsIn(chunks: AsyncIterable<string>): Promise<number> {
  let count = 0;
  for await (const text of chunks)
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}
