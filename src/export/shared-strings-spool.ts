import { randomUUID } from 'node:crypto';
import { open, rm, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * The export's shared-strings table (`xl/sharedStrings.xml`), built while the sheet is written.
 * A text cell of the sheet is an index into it (`t="s"`): Apple Numbers shows no inline string
 * (docs/spreadsheets.md, "What the XLSX export writes"), and a shared string is what Excel itself
 * writes. The table must follow the sheet in the zip, and it holds a text per cell: rather than keep
 * it in memory, its `<si>` entries go to a temporary file, readable by this process's user only and
 * removed once the export ends, and are read back into the zip after the sheet.
 *
 * Short texts repeat (colours, materials, currencies), so they are given one entry each, up to
 * {@link MAX_REMEMBERED} of them; a longer or later text gets an entry of its own each time, which
 * readers accept (an index says which entry; nothing requires entries to differ).
 */

/** Texts at most this long (UTF-16 units) are looked up before they get an entry. */
const MAX_REMEMBERED_LENGTH = 40;
/** How many short texts are remembered: bounds the memory of the lookup (a few MiB). */
const MAX_REMEMBERED = 65_536;
/** Bytes read back per piece from the temporary file. */
const READ_PIECE = 256 * 1024;

export class SharedStringsSpool {
  /** Cells that refer to the table (the `count` of `<sst>`). */
  references = 0;
  /** Entries in the table (its `uniqueCount`). */
  entries = 0;
  private readonly remembered = new Map<string, number>();
  private pending = '';

  private constructor(
    private readonly file: string,
    private readonly handle: FileHandle,
  ) {}

  /** Opens a new, empty table in the system's temporary folder. */
  static async open(): Promise<SharedStringsSpool> {
    const folder = os.tmpdir();
    const file = path.join(folder, `catalog-export-strings-${randomUUID()}.xml`);
    try {
      // `wx`: never an existing file; 0o600: the catalog's texts are the tenant's data.
      return new SharedStringsSpool(file, await open(file, 'wx+', 0o600));
    } catch (error) {
      // For the operator's log (the client is answered 500 without it): what to give the service.
      throw new Error(
        `the XLSX export cannot create its temporary file in ${folder} (TMPDIR); give the service a writable temporary folder (docs/deployment.md)`,
        { cause: error },
      );
    }
  }

  /** The index of `xml` (a text already escaped for element content), adding its entry if needed. */
  indexOf(xml: string): number {
    this.references += 1;
    const short = xml.length <= MAX_REMEMBERED_LENGTH;
    if (short) {
      const known = this.remembered.get(xml);
      if (known !== undefined) return known;
    }
    const index = this.entries++;
    if (short && this.remembered.size < MAX_REMEMBERED) this.remembered.set(xml, index);
    this.pending += `<si><t xml:space="preserve">${xml}</t></si>`;
    return index;
  }

  /** Writes the entries added since the last call to the file (called once per page of rows). */
  async flush(): Promise<void> {
    if (this.pending === '') return;
    const bytes = Buffer.from(this.pending, 'utf8');
    this.pending = '';
    await this.handle.write(bytes);
  }

  /**
   * The table's entries, as written, piece by piece from the start of the file. A piece is valid
   * until the next one is asked for: one buffer is read into again, since a buffer per piece left
   * tens of MiB of garbage behind before the collector ran.
   */
  async *pieces(): AsyncGenerator<Uint8Array> {
    await this.flush();
    const buffer = Buffer.allocUnsafe(READ_PIECE);
    for (let position = 0; ;) {
      const { bytesRead } = await this.handle.read(buffer, 0, READ_PIECE, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
  }

  /** Closes and removes the temporary file. */
  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
    await rm(this.file, { force: true });
  }
}
