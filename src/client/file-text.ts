import { createReadStream } from 'node:fs';
import { decodeText, type EncodingAdvice } from '../spreadsheets/text-encoding.ts';

/** What a refusal for a byte the file's encoding cannot read tells the command line's user. */
export function cliEncodingAdvice(format: 'csv' | 'json'): EncodingAdvice {
  return {
    save: format === 'csv' ? 'Save the file as "CSV UTF-8"' : 'Save the file as UTF-8',
    choose: 'pass --encoding windows-1252',
    chosen: 'Pass the encoding the file is written in with --encoding',
  };
}

const READ_CHUNK_BYTES = 256 * 1024;

/**
 * The bytes of `file`, streamed from the disk; with `before`, only those ahead of that offset (to
 * name the place of a byte its encoding cannot read).
 */
export function fileBytes(file: string, { before }: { before?: number } = {}): AsyncIterable<Uint8Array> {
  if (before === 0) return (async function* () {})();
  return createReadStream(file, {
    highWaterMark: READ_CHUNK_BYTES,
    ...(before === undefined ? {} : { end: before - 1 }),
  }) as AsyncIterable<Uint8Array>;
}

/**
 * The text of a file's bytes: UTF-8, or UTF-16 by its byte order mark, or `--encoding` (`encoding`),
 * decoded fatally (docs/spreadsheets.md#encodings): a byte that is not in the encoding throws
 * `TextEncodingError` with the command line's advice for a file of `format`.
 */
export function fileText(
  bytes: AsyncIterable<Uint8Array>,
  format: 'csv' | 'json',
  encoding?: string,
): AsyncGenerator<string> {
  return decodeText(bytes, { encoding, advice: cliEncodingAdvice(format) });
}
