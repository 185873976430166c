/**
 * A UTF-16 unit that is half of no pair (in `u` mode `\p{Cs}` matches only those): what
 * `String.prototype.isWellFormed` tells, which browsers before 2023 lack: this runs in the dashboard's
 * worker too.
 */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A workbook's shared strings held compactly: all their UTF-8 bytes in one growing buffer, and where
 * each ends. A table of JavaScript strings cost a catalog export's 350,000 entries about 70 MiB:
 * each entry's object, and the parser's text pieces its slices kept alive; this costs the bytes and
 * their ends (docs/spreadsheets.md, "The XLSX reader"). An entry is decoded again at each lookup,
 * which costs less than the converter's own work on the cell.
 */
export class SharedStringTable {
  #bytes = new Uint8Array(1 << 16);
  #used = 0;
  #ends = new Uint32Array(1 << 12);
  #count = 0;
  /**
   * Entries UTF-8 cannot carry exactly: an `_xD800_` escape undoes to a lone surrogate, which
   * encoding would turn into U+FFFD. Rare; kept as they are.
   */
  #unpaired = new Map<number, string>();
  readonly #encoder = new TextEncoder();
  // ignoreBOM: an entry may begin with U+FEFF (a CSV's BOM carried into a cell), kept as written.
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });

  get size(): number {
    return this.#count;
  }

  add(text: string): void {
    if (this.#count === this.#ends.length) this.#ends = grown(this.#ends, this.#count + 1);
    if (LONE_SURROGATE.test(text)) this.#unpaired.set(this.#count, text);
    else this.#write(text);
    this.#ends[this.#count++] = this.#used;
  }

  /** The entry at `index`, or undefined when the table has none there. */
  at(index: number): string | undefined {
    if (!Number.isInteger(index) || index < 0 || index >= this.#count) return undefined;
    const start = index === 0 ? 0 : this.#ends[index - 1]!;
    const end = this.#ends[index]!;
    // No bytes: an empty entry, or one kept apart as unpaired.
    if (start === end) return this.#unpaired.get(index) ?? '';
    return this.#decoder.decode(this.#bytes.subarray(start, end));
  }

  #write(text: string): void {
    // A UTF-16 unit is at most 3 UTF-8 bytes; make room for the worst case, then encode in place.
    const room = this.#used + text.length * 3;
    if (room > this.#bytes.length) this.#bytes = grown(this.#bytes, room);
    this.#used += this.#encoder.encodeInto(text, this.#bytes.subarray(this.#used)).written;
  }
}

/** A copy of `array` with room for at least `needed` elements, doubling so that adding stays linear. */
function grown<T extends Uint8Array | Uint32Array>(array: T, needed: number): T {
  let length = array.length * 2;
  while (length < needed) length *= 2;
  const copy = new (array.constructor as new (length: number) => T)(length);
  copy.set(array);
  return copy;
}
