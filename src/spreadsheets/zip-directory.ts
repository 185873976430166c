import { Inflate } from 'fflate';
import { readExactly, type ByteSource } from './byte-source.ts';
import { XlsxReadError } from './xlsx-read-error.ts';

/**
 * A zip read from its central directory, by position (docs/spreadsheets.md, "The XLSX reader"): the
 * directory at the end says where each entry is, so the parts of a workbook are read in the order
 * the reader needs them, whatever order the file holds them in, and only those parts are read.
 * Section numbers are those of PKWARE's APPNOTE.TXT (6.3.x).
 */

/** An entry as the central directory describes it (APPNOTE 4.3.12). */
export interface ZipEntry {
  /** Its name as written (a workbook's part name without the leading `/`). */
  name: string;
  /** General purpose bit flags (4.4.4): bit 0 encrypted, bit 3 sizes in a data descriptor. */
  flags: number;
  /** 0 stored, 8 deflated (4.4.5); anything else is not read. */
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Where its local file header starts (4.3.7). */
  localHeaderOffset: number;
}

/** The entries of a zip, found by name. */
export interface ZipDirectory {
  source: ByteSource;
  /**
   * The entry named `name`, compared case-insensitively: a package's part names are (ECMA-376
   * Part 2, §9.1.1.1), so `xl/SharedStrings.xml` is the part a relationship calls `sharedStrings.xml`.
   */
  find(name: string): ZipEntry | undefined;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50; // 4.3.16
const ZIP64_LOCATOR = 0x07064b50; // 4.3.15
const CENTRAL_FILE_HEADER = 0x02014b50; // 4.3.12
const LOCAL_FILE_HEADER = 0x04034b50; // 4.3.7
const END_RECORD_BYTES = 22;
const MAX_COMMENT_BYTES = 0xffff;
/** 0xFFFF entries or 0xFFFFFFFF sizes and offsets: the real value is in a ZIP64 record (4.4.1.4). */
const SATURATED_16 = 0xffff;
const SATURATED_32 = 0xffffffff;

const u16 = (bytes: Uint8Array, at: number) => bytes[at]! | (bytes[at + 1]! << 8);
const u32 = (bytes: Uint8Array, at: number) => (u16(bytes, at) | (u16(bytes, at + 2) << 16)) >>> 0;

const names = new TextDecoder('utf-8');

/** Where the end of central directory record starts in `tail`, the file's last bytes, or -1. */
function endRecordAt(tail: Uint8Array): number {
  // Searched from the end: the record is followed only by its comment (4.3.16), whose length it
  // gives; the first signature whose comment reaches the file's end exactly is the record.
  let loose = -1;
  for (let at = tail.length - END_RECORD_BYTES; at >= 0; at--) {
    if (u32(tail, at) !== END_OF_CENTRAL_DIRECTORY) continue;
    if (at + END_RECORD_BYTES + u16(tail, at + 20) === tail.length) return at;
    if (loose === -1) loose = at;
  }
  // Some writers get the comment's length wrong; the last signature is still the record.
  return loose;
}

/** Reads the zip's central directory; throws `XlsxReadError` for a file that is not a zip this reads. */
export async function readZipDirectory(source: ByteSource): Promise<ZipDirectory> {
  if (source.size < END_RECORD_BYTES) throw new XlsxReadError('it is not a zip file: too short');
  const tailLength = Math.min(source.size, END_RECORD_BYTES + MAX_COMMENT_BYTES);
  const tailStart = source.size - tailLength;
  const tail = await readExactly(source, tailStart, tailLength);
  const at = tail === null ? -1 : endRecordAt(tail);
  if (tail === null || at === -1) {
    throw new XlsxReadError('it is not a zip file: no end of central directory record');
  }
  const entryCount = u16(tail, at + 10);
  const directorySize = u32(tail, at + 12);
  const directoryOffset = u32(tail, at + 16);
  if (u16(tail, at + 4) !== 0 || u16(tail, at + 6) !== 0 || u16(tail, at + 8) !== entryCount) {
    throw new XlsxReadError('the zip spans several files (a split archive)');
  }
  const zip64 = at >= 20 && u32(tail, at - 20) === ZIP64_LOCATOR;
  if (entryCount === SATURATED_16 || directorySize === SATURATED_32 || directoryOffset === SATURATED_32) {
    throw new XlsxReadError('the zip is in ZIP64 form, which this reader does not read; save it again');
  }
  if (directoryOffset + directorySize > tailStart + at) {
    throw new XlsxReadError('the zip is truncated or damaged: its central directory lies outside the file');
  }
  const directory = await readExactly(source, directoryOffset, directorySize);
  if (directory === null) throw new XlsxReadError('the zip is truncated');
  const entries = new Map<string, ZipEntry>();
  let offset = 0;
  for (let index = 0; index < entryCount; index++) {
    if (offset + 46 > directory.length || u32(directory, offset) !== CENTRAL_FILE_HEADER) {
      throw new XlsxReadError('the zip is damaged: its central directory is cut short');
    }
    const nameLength = u16(directory, offset + 28);
    const extraLength = u16(directory, offset + 30);
    const commentLength = u16(directory, offset + 32);
    const entry: ZipEntry = {
      // Bit 11 says UTF-8; without it the name is CP437, which for the ASCII names of a
      // workbook's parts reads the same.
      name: names.decode(directory.subarray(offset + 46, offset + 46 + nameLength)),
      flags: u16(directory, offset + 8),
      method: u16(directory, offset + 10),
      crc32: u32(directory, offset + 16),
      compressedSize: u32(directory, offset + 20),
      size: u32(directory, offset + 24),
      localHeaderOffset: u32(directory, offset + 42),
    };
    if (
      zip64 &&
      (entry.compressedSize === SATURATED_32 ||
        entry.size === SATURATED_32 ||
        entry.localHeaderOffset === SATURATED_32)
    ) {
      throw new XlsxReadError('the zip is in ZIP64 form, which this reader does not read; save it again');
    }
    const key = entry.name.toLowerCase();
    if (!entries.has(key)) entries.set(key, entry);
    offset += 46 + nameLength + extraLength + commentLength;
  }
  return { source, find: (name) => entries.get(name.replace(/^\//, '').toLowerCase()) };
}

/** CRC-32 of APPNOTE 4.4.7 (polynomial 0xEDB88320), to tell a damaged entry from a good one. */
const CRC_TABLE = (() => {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c;
  }
  return table;
})();

function updateCrc(crc: number, bytes: Uint8Array): number {
  let c = ~crc;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

/** Compressed bytes read from the file at a time. */
export const PIECE_BYTES = 64 * 1024;

/**
 * Compressed bytes inflated at a time. A workbook's XML deflates 20 to 30 times, so 64 KiB of a
 * shared-strings part inflates to nearly 2 MB, and its text and the parser's pieces of it to several
 * more that the collector frees late; 8 KiB keeps each under 256 KB.
 */
const INFLATE_BYTES = 8 * 1024;

/**
 * The bytes of `entry`, inflated as they are read, `pieceBytes` of the file at a time: the entry is
 * never held whole. Its data starts after its local header's own name and extra field, whose lengths
 * may differ from the central directory's (4.3.7); its sizes are the central directory's, which hold
 * them also when the local header does not (bit 3: a data descriptor follows the data, 4.3.9). The
 * size and CRC-32 are checked at the end.
 */
export async function* entryBytes(
  zip: ZipDirectory,
  entry: ZipEntry,
  pieceBytes = PIECE_BYTES,
): AsyncGenerator<Uint8Array> {
  const damaged = (why: string, cause?: unknown) =>
    new XlsxReadError(`its part ${entry.name} is damaged: ${why}`, { cause });
  if (entry.flags & 0x41) throw new XlsxReadError(`its part ${entry.name} is encrypted`);
  if (entry.method !== 0 && entry.method !== 8) {
    throw new XlsxReadError(
      `its part ${entry.name} uses compression method ${entry.method}; only stored and deflated parts are read`,
    );
  }
  const header = await readExactly(zip.source, entry.localHeaderOffset, 30);
  if (header === null || u32(header, 0) !== LOCAL_FILE_HEADER)
    throw damaged('no local file header where the directory says');
  const start = entry.localHeaderOffset + 30 + u16(header, 26) + u16(header, 28);
  if (start + entry.compressedSize > zip.source.size) throw damaged('the file ends inside it');

  let crc = 0;
  let produced = 0;
  const inflated: Uint8Array[] = [];
  const inflater = entry.method === 8 ? new Inflate((chunk) => inflated.push(chunk)) : null;
  const push = (piece: Uint8Array, last: boolean) => {
    try {
      inflater!.push(piece, last);
    } catch (error) {
      throw damaged(error instanceof Error ? error.message : String(error), error);
    }
  };
  if (inflater !== null && entry.compressedSize === 0) push(new Uint8Array(0), true);
  for (let read = 0; read < entry.compressedSize;) {
    const asked = Math.min(pieceBytes, entry.compressedSize - read);
    let piece = await zip.source.read(start + read, asked);
    if (piece.length === 0) throw damaged('the file ends inside it');
    if (piece.length > asked) piece = piece.subarray(0, asked);
    read += piece.length;
    // A stored entry's piece is its bytes as they are: only inflating is done in smaller parts.
    const step = inflater === null ? piece.length : INFLATE_BYTES;
    for (let at = 0; at < piece.length; at += step) {
      const part = piece.subarray(at, at + step);
      if (inflater !== null) push(part, read === entry.compressedSize && at + part.length === piece.length);
      else inflated.push(part);
      for (const bytes of inflated) {
        crc = updateCrc(crc, bytes);
        produced += bytes.length;
        if (bytes.length > 0) yield bytes;
      }
      inflated.length = 0;
    }
  }
  if (produced !== entry.size) throw damaged(`${produced} bytes where the directory says ${entry.size}`);
  if (crc !== entry.crc32) throw damaged('its CRC-32 does not match');
}
