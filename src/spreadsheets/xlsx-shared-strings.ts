import type { ZipDirectory, ZipEntry } from './zip-directory.ts';
import { localName, parseXmlPart, xmlParser } from './xlsx-xml.ts';
import { StringItemText } from './xlsx-text.ts';
import { unescapeXlsxText } from './xlsx-escapes.ts';
import { SharedStringTable } from './shared-string-table.ts';

/**
 * The shared strings table (ECMA-376 Part 1, §18.4.9: `<sst><si>…</si>…</sst>`), in order, each with
 * its `_xHHHH_` escapes undone. The one part the reader holds whole, compactly (`SharedStringTable`):
 * a text cell names its text by its index in this table, which the file may hold before or after the
 * sheet (docs/spreadsheets.md).
 */
export async function readSharedStrings(
  zip: ZipDirectory,
  entry: ZipEntry,
  pieceBytes?: number,
): Promise<SharedStringTable> {
  const strings = new SharedStringTable();
  const item = new StringItemText();
  let inItem = false;
  const parser = xmlParser(entry.name);
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    if (name === 'si') {
      inItem = true;
      item.reset();
    } else if (inItem) item.open(name);
  });
  parser.on('closetag', (tag) => {
    const name = localName(tag.name);
    if (name === 'si') {
      inItem = false;
      strings.add(unescapeXlsxText(item.text));
    } else if (inItem) item.close(name);
  });
  parser.on('text', (text) => item.characters(text));
  parser.on('cdata', (text) => item.characters(text));
  await parseXmlPart(zip, entry, parser, pieceBytes);
  return strings;
}
