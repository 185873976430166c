/**
 * Bytes of a text in the encodings other programs write (docs/spreadsheets.md#encodings), built from
 * each encoding's own rules rather than with the decoder under test or copied files.
 */

import { PRODUCT_COLUMNS, VARIANT_COLUMNS } from '../../src/spreadsheets/sheet-layout.ts';

/** The product and variant columns of the layout, the header of the encoded catalogs. */
export const COLUMNS = [...PRODUCT_COLUMNS, ...VARIANT_COLUMNS];
/** Texts with characters outside ASCII that Windows-1252 holds: `é`, the en dash and the euro sign. */
export const NAME = 'Café sofa – 3 seater';
export const DESCRIPTION = 'Price in € only';

/** A row of the layout, in the order of COLUMNS. */
export const sofaRow = (id: string, sku: string): string[] => [
  id,
  NAME,
  DESCRIPTION,
  'Modern',
  'Sofas & Loveseats',
  'Sofa',
  sku,
  'Oat',
  'https://shop.example/sofa',
  '95.5',
  '82',
  '214',
  '61.2',
  'Beige',
  '1299.5',
  'Northwind',
];

/** Windows-1252's characters above 0x7F that the tests use, by the code page's table. */
const WINDOWS_1252: Readonly<Record<string, number>> = {
  '€': 0x80,
  '–': 0x96,
  '—': 0x97,
  '’': 0x92,
  é: 0xe9,
  è: 0xe8,
  ü: 0xfc,
  ñ: 0xf1,
};

/** `text` in Windows-1252 (Excel's "CSV (Comma delimited)" on a Western-European Windows). */
export function windows1252(text: string): Uint8Array {
  return Uint8Array.from([...text], (char) => {
    const code = char.codePointAt(0)!;
    if (code < 0x80) return code;
    const byte = WINDOWS_1252[char];
    if (byte === undefined) throw new Error(`${char} is not in the test's Windows-1252 table`);
    return byte;
  });
}

/** `text` in UTF-16 code units, little- or big-endian, after a byte order mark (FF FE / FE FF). */
export function utf16(text: string, order: 'le' | 'be', { bom = true }: { bom?: boolean } = {}): Uint8Array {
  const bytes = new Uint8Array((bom ? 2 : 0) + text.length * 2);
  let at = 0;
  const put = (unit: number) => {
    const [first, second] = order === 'le' ? [unit & 0xff, unit >> 8] : [unit >> 8, unit & 0xff];
    bytes[at++] = first;
    bytes[at++] = second;
  };
  if (bom) put(0xfeff);
  for (let index = 0; index < text.length; index++) put(text.charCodeAt(index));
  return bytes;
}

/** `text` in UTF-8, code point by code point by RFC 3629, after a byte order mark (EF BB BF) when asked. */
export function utf8(text: string, { bom = false }: { bom?: boolean } = {}): Uint8Array {
  const bytes: number[] = bom ? [0xef, 0xbb, 0xbf] : [];
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code < 0x80) bytes.push(code);
    else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000)
      bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else
      bytes.push(
        0xf0 | (code >> 18),
        0x80 | ((code >> 12) & 0x3f),
        0x80 | ((code >> 6) & 0x3f),
        0x80 | (code & 0x3f),
      );
  }
  return Uint8Array.from(bytes);
}

/** `bytes` in pieces of `size` (the last one shorter), as a stream hands them over. */
export async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}
