import { createHash } from 'node:crypto';
import { batchesOf, type WellFormedItem } from '../import-pipeline/batches.ts';
import { readItems, type FileFormat } from './json-stream.ts';
import { TextEncodingError } from '../spreadsheets/text-encoding.ts';

/** What a first reading of a file says before anything is sent (docs/reference.md §11.6). */
export interface FileSurvey {
  /** How many batches the run will cut; null when the file stops being readable part way. */
  batches: number | null;
  /**
   * SHA-256 (base64url) of what decides the run's batches: the format, the batch size, and each item's
   * position and text (a malformed one by its position). Two readings with the same fingerprint cut
   * the same batches from the same items, so a resumed run's keys name the same batches; an edit that
   * only changes the white space between items changes nothing sent, and so not the fingerprint.
   */
  fingerprint: string;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Reads `file` once, as a run will (`readItems`, `batchesOf`), counting its batches and taking its
 * fingerprint. Holds one batch at a time. Only for a file that can be read again: a regular file.
 */
export async function surveyFile(
  file: string,
  format: FileFormat,
  batchSize: number,
  encoding?: string,
): Promise<FileSurvey> {
  const hash = createHash('sha256').update(`${format} ${batchSize}\n`);
  async function* items(): AsyncGenerator<WellFormedItem> {
    // Nothing is sent from here, and the items of a spreadsheet end at its first layout defect with
    // the error its check would throw: the check's own reading of the file would add nothing.
    for await (const item of readItems(file, format, { checkSheetFirst: false, encoding })) {
      if (item.text === undefined) {
        hash.update(`${item.position} malformed\n`);
        continue;
      }
      // Length-prefixed, so that no two different sequences of texts hash alike.
      hash.update(`${item.position} ${item.text.length}\n`).update(item.text);
      yield { position: item.position, text: item.text };
    }
  }
  let batches = 0;
  try {
    for await (const batch of batchesOf(items(), { size: batchSize })) batches = batch.seq;
  } catch (error) {
    // A JSON file with a byte its encoding cannot read is refused before anything is sent (a
    // spreadsheet's is, by the run's layout check).
    if (error instanceof TextEncodingError) throw error;
    // The run will stop at the same place, with this message: so will a resumed one, alike.
    hash.update(`unreadable ${message(error)}`);
    return { batches: null, fingerprint: hash.digest('base64url') };
  }
  return { batches, fingerprint: hash.digest('base64url') };
}
