import { Zip, ZipDeflate, strToU8 } from 'fflate';
import { SHEET_COLUMNS } from '../spreadsheets/sheet-layout.ts';
import type { StoredProduct } from './ingest-parts.ts';
import { productRows } from './sheet-rows.ts';
import { SharedStringsSpool } from './shared-strings-spool.ts';
import {
  FIXED_PARTS,
  rowXml,
  SHARED_STRINGS_PART,
  SHARED_STRINGS_TAIL,
  sharedStringsHead,
  SHEET_HEAD,
  SHEET_PART,
  SHEET_TAIL,
} from './xlsx-parts.ts';
import { ZlibZipEntry } from './zlib-zip-entry.ts';

/**
 * The catalog as an XLSX workbook, its first sheet in the spreadsheet layout, written by hand into
 * an `fflate` zip (docs/spreadsheets.md: why not a library). Each page's rows become the sheet's XML,
 * which is compressed and handed on before the next page is read; the caller reads the next page only
 * once it has taken these bytes (`Readable.from`'s backpressure). The sheet's texts go to the
 * shared-strings table, spooled to a temporary file and added after the sheet. So memory stays flat
 * whatever the catalog's size: a page's XML, its compressed bytes and the table's short-text lookup.
 */
export async function* xlsxChunks(
  pages: AsyncIterable<readonly StoredProduct[]>,
): AsyncGenerator<Uint8Array> {
  let ready: Uint8Array[] = [];
  let failure: Error | undefined;
  const zip = new Zip((error, chunk, final) => {
    if (error) failure ??= error;
    else if (chunk.length > 0 || final) ready.push(chunk);
  });
  /** What the zip has written since the last call, and the error it met, if any. */
  const taken = () => {
    if (failure !== undefined) throw failure;
    const chunks = ready;
    ready = [];
    return chunks;
  };

  for (const [path, xml] of FIXED_PARTS) {
    const part = new ZipDeflate(path);
    zip.add(part);
    part.push(strToU8(xml), true);
  }
  const strings = await SharedStringsSpool.open();
  const stringIndex = (xml: string) => strings.indexOf(xml);
  const sheet = new ZlibZipEntry(SHEET_PART);
  zip.add(sheet);
  try {
    await sheet.write(Buffer.from(SHEET_HEAD + rowXml(1, SHEET_COLUMNS, stringIndex), 'utf8'));
    let rowNumber = 1;
    for await (const page of pages) {
      let xml = '';
      for (const product of page) {
        for (const row of productRows(product)) xml += rowXml(++rowNumber, row, stringIndex);
      }
      await sheet.write(Buffer.from(xml, 'utf8'));
      await strings.flush();
      yield* taken();
    }
    await sheet.write(Buffer.from(SHEET_TAIL, 'utf8'));
    await sheet.end();

    const table = new ZlibZipEntry(SHARED_STRINGS_PART);
    zip.add(table);
    await table.write(Buffer.from(sharedStringsHead(strings.references, strings.entries), 'utf8'));
    for await (const piece of strings.pieces()) {
      await table.write(piece);
      yield* taken();
    }
    await table.write(Buffer.from(SHARED_STRINGS_TAIL, 'utf8'));
    await table.end();
    zip.end();
    yield* taken();
  } finally {
    // A client that went away, or a failed read: the compressor stops, and nothing more is written.
    zip.terminate();
    await strings.close();
  }
}
