import type { Stats, WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { once } from 'node:events';
import type { FieldError } from '../import-pipeline/problem-answer.ts';

/** One line of the errors file: a failed item, where it is in the input and in its batch, and why. */
export interface ErrorLine {
  position: number;
  /** The input line, for an item that was never sent because it is not JSON. */
  line?: number;
  batch_id: string | null;
  index: number | null;
  external_id: string | null;
  sku: string | null;
  /** For a spreadsheet's item, each error also names the file's row and column (docs/reference.md §11.5). */
  errors: Array<FieldError & { row?: number; column?: string | null }>;
}

/** The line of an item that is in no batch: never sent, or refused on its own. */
export function unbatchedLine(
  position: number,
  errors: FieldError[],
  line?: number,
  externalId: string | null = null,
): ErrorLine {
  return { position, line, batch_id: null, index: null, external_id: externalId, sku: null, errors };
}

/**
 * The JSONL file of failed items. A regular file is removed at close when nothing failed, so a stale one
 * never misleads; anything else it may name (`/dev/stderr`, a FIFO, a device) is only written to.
 */
export class ErrorsFile {
  #lines = 0;

  private constructor(
    readonly path: string,
    private readonly stream: WriteStream,
    /** What was opened, to tell at close whether `path` is still that regular file. */
    private readonly opened: Stats,
  ) {}

  /** Opens (and truncates) `path`; fails now rather than after the upload when it cannot be written. */
  static async open(path: string): Promise<ErrorsFile> {
    const handle = await fs.open(path, 'w');
    try {
      return new ErrorsFile(path, handle.createWriteStream(), await handle.stat());
    } catch (error) {
      await handle.close();
      throw error;
    }
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

  /**
   * Flushes and closes; when no line was written, removes the file if `path` still names the regular
   * file that was opened. A symbolic link is left alone too: removing it would not remove the file.
   */
  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, 'close');
    if (this.#lines > 0 || !this.opened.isFile()) return;
    try {
      const now = await fs.lstat(this.path);
      if (now.isFile() && now.dev === this.opened.dev && now.ino === this.opened.ino) await fs.rm(this.path);
    } catch {
      // Every item was accounted for; an empty file left behind misleads no one, so a removal that
      // fails (the file gone already, a read-only folder) must not turn the run into a failure.
    }
  }
}
