/**
 * ECMA-376 `_xHHHH_` escapes (Part 1, §22.4.2.4 ST_Xstring): XML 1.0 cannot carry most control
 * characters, and its parsers turn `\r\n` into `\n`, so an XLSX cell writes them as `_x0001_`,
 * `_x000D_`; a text that itself holds `_xHHHH_` has its `_` written `_x005F_` so it reads back as
 * written. Excel and LibreOffice read and write these; `exceljs` passes them through untouched (and
 * drops raw control characters), so the export and the import do it here.
 */

/** Characters XML 1.0 cannot hold, and `\r`, which XML parsers would turn into `\n`. */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's job
const NEEDS_ESCAPE = /[\u0000-\u0008\u000B\u000C\u000D\u000E-\u001F\uFFFE\uFFFF]|_(?=x[0-9A-Fa-f]{4}_)/g;
const ESCAPED = /_x([0-9A-Fa-f]{4})_/g;

const hex4 = (c: string) => `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`;

/** A text as an XLSX cell holds it. */
export const escapeXlsxText = (text: string): string => text.replace(NEEDS_ESCAPE, hex4);

/** A text read from an XLSX cell, its escapes undone. */
export const unescapeXlsxText = (text: string): string =>
  text.includes('_x')
    ? text.replace(ESCAPED, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
    : text;
