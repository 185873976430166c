import { once } from 'node:events';
import zlib from 'node:zlib';
import type { AsyncFlateStreamHandler, ZipInputFile } from 'fflate';

/** The most a zip entry without Zip64 records as its size (fflate writes 32-bit sizes). */
const MAX_ENTRY_SIZE = 0xffff_ffff;

/**
 * A deflated entry of an `fflate` `Zip`, compressed by Node's zlib: fflate's own `ZipDeflate` runs
 * in JavaScript on the event loop and deflated the export's sheet 5 to 12 times slower
 * (docs/performance.md), while zlib runs in libuv's thread pool. fflate writes the entry's headers
 * and data descriptor; this gives it the compressed bytes, the CRC-32 and the size of the text.
 */
export class ZlibZipEntry implements ZipInputFile {
  readonly compression = 8;
  crc = 0;
  size = 0;
  /** Set by the `Zip` this entry is added to. */
  ondata: AsyncFlateStreamHandler = () => undefined;
  private readonly deflate: zlib.DeflateRaw;
  private readonly ended: Promise<unknown>;

  constructor(
    readonly filename: string,
    level = zlib.constants.Z_DEFAULT_COMPRESSION,
  ) {
    this.deflate = zlib.createDeflateRaw({ level });
    // zlib's output is never in shared memory.
    this.deflate.on('data', (chunk: Buffer) => this.ondata(null, chunk as Uint8Array<ArrayBuffer>, false));
    // 'end' comes after the last 'data': only then is the entry whole. A zlib error rejects the
    // pending `write` or `end`, whose caller gives up the zip; this is only so that it is not unhandled.
    this.ended = once(this.deflate, 'end');
    this.ended.catch(() => undefined);
  }

  /** Adds `bytes` to the entry; resolves once zlib has compressed them (their output given to the zip). */
  async write(bytes: Uint8Array): Promise<void> {
    if (this.size + bytes.length > MAX_ENTRY_SIZE) {
      throw new Error(`${this.filename} would pass 4 GiB, more than a zip entry without Zip64 records`);
    }
    this.crc = zlib.crc32(bytes, this.crc);
    this.size += bytes.length;
    await new Promise<void>((resolve, reject) =>
      this.deflate.write(bytes, (error) => (error ? reject(error) : resolve())),
    );
  }

  /** Ends the entry; resolves once its last compressed bytes are given to the zip. */
  async end(): Promise<void> {
    this.deflate.end();
    await this.ended;
    this.ondata(null, new Uint8Array(0), true);
  }

  /** Stops compressing (the zip was abandoned). */
  terminate(): void {
    this.deflate.destroy();
  }
}
