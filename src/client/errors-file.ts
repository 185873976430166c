import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { once } from 'node:events';

/** One line of the errors file: a failed item, where it is in the input and in its batch, and why. */
export interface ErrorLine {
  position: number;
  /** The input line, for an item that was never sent because it is not JSON. */
  line?: number;
  batch_id: string | null;
  index: number | null;
  external_id: string | null;
  sku: string | null;
  errors: Array<{ field: string; code: string; message: string }>;
}

/** The JSONL file of failed items; it is removed at close when nothing failed, so a stale one never misleads. */
export class ErrorsFile {
  #lines = 0;

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
  ) {}

  /** Opens (and truncates) `path`; fails now rather than after the upload when it cannot be written. */
  static async open(path: string): Promise<ErrorsFile> {
    const stream = createWriteStream(path, { flags: 'w' });
    await once(stream, 'open');
    return new ErrorsFile(path, stream);
  }

  /** Lines written so far. */
  get lines(): number {
    return this.#lines;
  }

  /** Appends one line, waiting when the disk is behind so memory stays bounded. */
  async write(line: ErrorLine): Promise<void> {
    this.#lines++;
    if (!this.stream.write(`${JSON.stringify(line)}\n`)) await once(this.stream, 'drain');
  }

  /** Flushes and closes; deletes the file if it holds no line. */
  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, 'close');
    if (this.#lines === 0) await fs.rm(this.path, { force: true });
  }
}
