import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { entryBytes, type ZipDirectory, type ZipEntry } from './zip-directory.ts';
import { XlsxReadError } from './xlsx-read-error.ts';

/**
 * A workbook part's XML, parsed as it is inflated (docs/spreadsheets.md, "The XLSX reader"). The
 * bytes are decoded by one `TextDecoder` in streaming mode, so a character whose bytes fall in two
 * pieces of the file, or two pieces of the inflater's output, is decoded whole: the bug of reading
 * each piece on its own (`BLYSK��R`) cannot happen here. The decoder is fatal: bytes that are not
 * UTF-8 refuse the file rather than become U+FFFD.
 */

/** An element's name without its prefix: `x:row` is `row` (some producers write prefixed elements). */
export const localName = (name: string): string => {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
};

/** A parsed start tag (attributes by their written names). */
export type XmlTag = SaxesTagPlain;

/**
 * The encoding of a part from its first bytes (XML 1.0, Appendix F): a package's XML is UTF-8 or
 * UTF-16 (ECMA-376 Part 2, §8.1.4), the latter told by its byte order mark or its first `<`.
 */
function encodingOf(first: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' {
  if ((first[0] === 0xff && first[1] === 0xfe) || (first[0] === 0x3c && first[1] === 0x00)) return 'utf-16le';
  if ((first[0] === 0xfe && first[1] === 0xff) || (first[0] === 0x00 && first[1] === 0x3c)) return 'utf-16be';
  return 'utf-8';
}

/** The text of `entry`, a piece at a time, decoded across the pieces' boundaries. */
async function* entryText(zip: ZipDirectory, entry: ZipEntry, pieceBytes?: number): AsyncGenerator<string> {
  let decoder: InstanceType<typeof TextDecoder> | null = null;
  let head = new Uint8Array(0);
  const decode = (bytes: Uint8Array, stream: boolean) => {
    try {
      return decoder!.decode(bytes, { stream });
    } catch (error) {
      throw new XlsxReadError(`its part ${entry.name} is not ${decoder!.encoding.toUpperCase()} text`, {
        cause: error,
      });
    }
  };
  for await (let bytes of entryBytes(zip, entry, pieceBytes)) {
    if (decoder === null) {
      // The encoding is told by two bytes; a first piece may hold one.
      const joined = new Uint8Array(head.length + bytes.length);
      joined.set(head);
      joined.set(bytes, head.length);
      head = joined;
      if (head.length < 2) continue;
      decoder = new TextDecoder(encodingOf(head), { fatal: true });
      bytes = head;
    }
    yield decode(bytes, true);
  }
  if (decoder === null) {
    decoder = new TextDecoder(encodingOf(head), { fatal: true });
    yield decode(head, false);
  } else {
    yield decode(new Uint8Array(0), false);
  }
}

/** A parser for the XML of `part`, without namespaces: elements are matched by `localName`. */
export function xmlParser(part: string): SaxesParser {
  const parser = new SaxesParser({ position: false });
  parser.on('error', (error) => {
    throw new XlsxReadError(`its part ${part} is not well-formed XML: ${error.message}`, { cause: error });
  });
  return parser;
}

/**
 * Feeds `entry`'s text to `parser`, yielding after each piece so the caller can hand on what it
 * made of it; closes the parser at the end. Returning early stops reading the entry.
 */
export async function* feedXml(
  zip: ZipDirectory,
  entry: ZipEntry,
  parser: SaxesParser,
  pieceBytes?: number,
): AsyncGenerator<void> {
  for await (const text of entryText(zip, entry, pieceBytes)) {
    if (text === '') continue;
    parser.write(text);
    yield;
  }
  parser.close();
  yield;
}

/** Reads all of a small part (a relationships part, the workbook) with `parser`. */
export async function parseXmlPart(
  zip: ZipDirectory,
  entry: ZipEntry,
  parser: SaxesParser,
  pieceBytes?: number,
): Promise<void> {
  for await (const _ of feedXml(zip, entry, parser, pieceBytes)) {
    // everything happens in the parser's handlers
  }
}
