/**
 * A file read by position, the way a zip is meant to be read: its directory is at the end
 * (docs/spreadsheets.md, "The XLSX reader"). `read` may answer fewer bytes than asked (a short read);
 * it answers none only past the end. In the page a `Blob` (a `File`) is one; in Node the client opens
 * one over a file handle (`src/client/file-source.ts`). Neither is ever held whole.
 */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** A Blob or File read by slices: what the dashboard's worker reads the chosen file with. */
export function blobSource(blob: Blob): ByteSource {
  return {
    size: blob.size,
    read: async (offset, length) => new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer()),
  };
}

/** Bytes already in memory (a test's workbook, an export's response) as a source. */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.subarray(offset, Math.min(offset + length, bytes.length)),
  };
}

/** Exactly `length` bytes from `offset`, over as many reads as the source needs; null if the file ends first. */
export async function readExactly(
  source: ByteSource,
  offset: number,
  length: number,
): Promise<Uint8Array | null> {
  const first = await source.read(offset, length);
  if (first.length === length) return first;
  const bytes = new Uint8Array(length);
  let filled = 0;
  for (let piece = first; ; piece = await source.read(offset + filled, length - filled)) {
    if (piece.length === 0) return null;
    bytes.set(piece.subarray(0, length - filled), filled);
    filled += Math.min(piece.length, length - filled);
    if (filled === length) return bytes;
  }
}
