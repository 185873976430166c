import { SHEET_COLUMNS } from '../spreadsheets/sheet-layout.ts';
import { escapeXlsxText } from '../spreadsheets/xlsx-escapes.ts';
import { TEXT_COLUMN, type ExportCell } from './sheet-rows.ts';

/**
 * The XML of the export's workbook (ECMA-376 SpreadsheetML, the parts a reader needs and no more):
 * the package's content types and relationships, a workbook of one sheet, a style sheet with one
 * text format, and the sheet itself written row by row. docs/spreadsheets.md says what the cells are.
 */

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const PACKAGE_REL_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';

/** The sheet's part, as the workbook's relationship names it. */
export const SHEET_PART = 'xl/worksheets/sheet1.xml';
/** The shared-strings part, written after the sheet (`shared-strings-spool.ts`). */
export const SHARED_STRINGS_PART = 'xl/sharedStrings.xml';

/** The parts other than the sheet, by path, in the order the zip holds them. */
export const FIXED_PARTS: ReadonlyArray<readonly [path: string, xml: string]> = [
  [
    '[Content_Types].xml',
    `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
      '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
      '<Default Extension="xml" ContentType="application/xml"/>' +
      `<Override PartName="/xl/workbook.xml" ContentType="${TYPE}.sheet.main+xml"/>` +
      `<Override PartName="/${SHEET_PART}" ContentType="${TYPE}.worksheet+xml"/>` +
      `<Override PartName="/xl/styles.xml" ContentType="${TYPE}.styles+xml"/>` +
      `<Override PartName="/${SHARED_STRINGS_PART}" ContentType="${TYPE}.sharedStrings+xml"/>` +
      '</Types>',
  ],
  [
    '_rels/.rels',
    `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_REL_NS}">` +
      `<Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/>` +
      '</Relationships>',
  ],
  [
    'xl/workbook.xml',
    `${XML_DECLARATION}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}">` +
      '<sheets><sheet name="products" sheetId="1" r:id="rId1"/></sheets></workbook>',
  ],
  [
    'xl/_rels/workbook.xml.rels',
    `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_REL_NS}">` +
      `<Relationship Id="rId1" Type="${REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>` +
      `<Relationship Id="rId2" Type="${REL_NS}/styles" Target="styles.xml"/>` +
      `<Relationship Id="rId3" Type="${REL_NS}/sharedStrings" Target="sharedStrings.xml"/>` +
      '</Relationships>',
  ],
  [
    // Cell format 1 is the built-in number format 49, "@": text. A cell of that format typed into
    // stays text, so `00042` keeps its zeros in Excel and LibreOffice.
    'xl/styles.xml',
    `${XML_DECLARATION}<styleSheet xmlns="${MAIN_NS}">` +
      '<fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>' +
      '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
      '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
      '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
      '<cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>' +
      '<xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>' +
      '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
      '</styleSheet>',
  ],
];

/** The cell format of text columns in styles.xml. */
const TEXT_STYLE = 1;

/** A column's letters: 0 → A, 25 → Z, 26 → AA. */
function columnName(index: number): string {
  let name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  }
  return name;
}

const COLUMN_NAMES = SHEET_COLUMNS.map((_, index) => columnName(index));

/** A column's width in characters: wide enough to read the start of its cells. */
const columnWidth = (column: string): number =>
  column === 'description'
    ? 40
    : column.endsWith('_url')
      ? 32
      : TEXT_COLUMN[SHEET_COLUMNS.indexOf(column)]
        ? 16
        : 10;

/**
 * The sheet up to its first row: the columns, text ones in the text format, so a value typed into an
 * empty cell of `sku` later is text too.
 */
export const SHEET_HEAD =
  `${XML_DECLARATION}<worksheet xmlns="${MAIN_NS}"><cols>` +
  SHEET_COLUMNS.map(
    (column, index) =>
      `<col min="${index + 1}" max="${index + 1}" width="${columnWidth(column)}" customWidth="1"` +
      `${TEXT_COLUMN[index] ? ` style="${TEXT_STYLE}"` : ''}/>`,
  ).join('') +
  '</cols><sheetData>';

/** The sheet after its last row. */
export const SHEET_TAIL = '</sheetData></worksheet>';

const XML_SPECIAL = /[&<>]/g;
const XML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * A text as element content: first the `_xHHHH_` escapes of characters XML 1.0 cannot hold, of `\r`
 * (which an XML parser would read as `\n`) and of a `_` that starts a literal `_xHHHH_`
 * (`xlsx-escapes.ts`), then XML's own.
 */
const xmlText = (text: string): string => escapeXlsxText(text).replace(XML_SPECIAL, (c) => XML_ENTITY[c]!);

/** The head of the shared-strings table, with its counts (known once the sheet is written). */
export const sharedStringsHead = (references: number, entries: number): string =>
  `${XML_DECLARATION}<sst xmlns="${MAIN_NS}" count="${references}" uniqueCount="${entries}">`;

/** The shared-strings table after its last entry. */
export const SHARED_STRINGS_TAIL = '</sst>';

/**
 * One row of the sheet. A text is a shared string (`t="s"`, its index from `stringIndex`), which
 * Excel, LibreOffice and Numbers read as the text written, undoing its `_xHHHH_` escapes; an empty
 * string is an empty shared string, which the import tells from an empty cell; a number is a
 * numeric cell; null writes no cell.
 */
export function rowXml(
  rowNumber: number,
  cells: readonly ExportCell[],
  stringIndex: (xml: string) => number,
): string {
  let xml = `<row r="${rowNumber}">`;
  cells.forEach((cell, index) => {
    if (cell === null) return;
    const ref = `${COLUMN_NAMES[index]!}${rowNumber}`;
    const style = TEXT_COLUMN[index] ? ` s="${TEXT_STYLE}"` : '';
    xml +=
      typeof cell === 'number'
        ? `<c r="${ref}"${style}><v>${cell}</v></c>`
        : `<c r="${ref}"${style} t="s"><v>${stringIndex(xmlText(cell))}</v></c>`;
  });
  return `${xml}</row>`;
}
