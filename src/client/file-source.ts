import fs from 'node:fs/promises';
import type { ByteSource } from '../spreadsheets/byte-source.ts';

/** A file on disk read by position (the XLSX reader's source, docs/spreadsheets.md), and its closing. */
export interface FileSource extends ByteSource {
  close(): Promise<void>;
}

/** Opens `file` to be read by position through one file handle; the caller closes it. */
export async function openFileSource(file: string): Promise<FileSource> {
  const handle = await fs.open(file, 'r');
  try {
    const { size } = await handle.stat();
    return {
      size,
      read: async (offset, length) => {
        const buffer = Buffer.allocUnsafe(Math.max(0, Math.min(length, size - offset)));
        if (buffer.length === 0) return buffer;
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        return buffer.subarray(0, bytesRead);
      },
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
