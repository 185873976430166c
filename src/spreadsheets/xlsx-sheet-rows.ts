import type { SheetRow } from './csv-rows.ts';
import type { SheetCell } from './sheet-cells.ts';
import type { ZipDirectory, ZipEntry } from './zip-directory.ts';
import type { SharedStringTable } from './shared-string-table.ts';
import { feedXml, localName, xmlParser } from './xlsx-xml.ts';
import { StringItemText } from './xlsx-text.ts';
import { unescapeXlsxText } from './xlsx-escapes.ts';
import { XlsxReadError } from './xlsx-read-error.ts';

/**
 * The rows of a worksheet part (ECMA-376 Part 1, §18.3: `<sheetData><row><c>`), read as the part is
 * inflated, holding one row at a time (docs/spreadsheets.md, "The XLSX reader").
 */

/** The 0-based column of a cell reference's letters (`B7` → 1, `AA1` → 26), or -1 without letters. */
function columnOf(reference: string): number {
  let column = 0;
  let at = 0;
  for (; at < reference.length; at++) {
    const code = reference.charCodeAt(at) & ~0x20; // upper case
    if (code < 0x41 || code > 0x5a) break;
    column = column * 26 + (code - 0x40);
  }
  return at === 0 ? -1 : column - 1;
}

/** The letters of a 0-based column, to name a cell in a message. */
function columnName(column: number): string {
  let name = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26))
    name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

/** What a cell of a row is being read: its column, type, and the text of its `<v>` or `<is>`. */
interface CellState {
  column: number;
  type: string;
  value: string;
  hasValue: boolean;
  inValue: boolean;
  inInline: boolean;
  hasInline: boolean;
}

/**
 * A cell as the converter takes it (§18.18.11 ST_CellType): a shared (`s`), inline (`inlineStr`) or
 * formula (`str`) string with its `_xHHHH_` escapes undone; a boolean as `TRUE`/`FALSE`; an error as
 * its text (`#DIV/0!`); an ISO date (`d`) as written; a number (`n`, or no type) as a number. A cell
 * without a value (a styled empty cell, a formula never calculated) is empty: null.
 */
function cellValue(cell: CellState, inline: string, shared: SharedStringTable, row: number): SheetCell {
  switch (cell.type) {
    case 's': {
      if (!cell.hasValue) return null;
      const text = shared.at(Number(cell.value));
      if (text === undefined) {
        throw new XlsxReadError(
          `cell ${columnName(cell.column)}${row} names shared string ${cell.value.trim()}, which the workbook does not hold`,
        );
      }
      return text;
    }
    case 'inlineStr':
      return cell.hasInline ? unescapeXlsxText(inline) : cell.hasValue ? unescapeXlsxText(cell.value) : null;
    case 'str':
      return cell.hasValue ? unescapeXlsxText(cell.value) : null;
    case 'b': {
      if (!cell.hasValue) return null;
      const value = cell.value.trim();
      return value === '1' || value.toLowerCase() === 'true' ? 'TRUE' : 'FALSE';
    }
    case 'e':
    case 'd':
      return cell.hasValue ? cell.value : null;
    default: {
      if (!cell.hasValue || cell.value.trim() === '') return null;
      const number = Number(cell.value);
      return Number.isNaN(number) ? cell.value : number;
    }
  }
}

/**
 * The rows of the worksheet `entry`, each with its number in the sheet: a row or cell without its
 * `r` comes after the one before it; a row with no value in any cell is left out (and counted, as a
 * missing row is). Reading stops at `</sheetData>`; what follows (merged cells, links) is not read.
 */
export async function* sheetRows(
  zip: ZipDirectory,
  entry: ZipEntry,
  shared: SharedStringTable,
  pieceBytes?: number,
): AsyncGenerator<SheetRow> {
  const parser = xmlParser(entry.name);
  const ready: SheetRow[] = [];
  const inline = new StringItemText();
  let inSheetData = false;
  let done = false;
  let row = 0;
  let cells: SheetCell[] = [];
  let nextColumn = 0;
  const cell: CellState = {
    column: 0,
    type: 'n',
    value: '',
    hasValue: false,
    inValue: false,
    inInline: false,
    hasInline: false,
  };

  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    if (!inSheetData) {
      if (name === 'sheetData') inSheetData = true;
      return;
    }
    switch (name) {
      case 'row': {
        const number = tag.attributes.r === undefined ? NaN : parseInt(tag.attributes.r, 10);
        row = Number.isNaN(number) ? row + 1 : number;
        cells = [];
        nextColumn = 0;
        return;
      }
      case 'c': {
        const reference = tag.attributes.r;
        const column = reference === undefined ? -1 : columnOf(reference);
        cell.column = column === -1 ? nextColumn : column;
        nextColumn = cell.column + 1;
        cell.type = tag.attributes.t ?? 'n';
        cell.value = '';
        cell.hasValue = false;
        cell.inValue = false;
        cell.inInline = false;
        cell.hasInline = false;
        return;
      }
      case 'v':
        cell.inValue = true;
        cell.hasValue = true;
        return;
      case 'is':
        cell.inInline = true;
        cell.hasInline = true;
        inline.reset();
        return;
      default:
        if (cell.inInline) inline.open(name);
    }
  });
  parser.on('closetag', (tag) => {
    if (!inSheetData) return;
    const name = localName(tag.name);
    switch (name) {
      case 'v':
        cell.inValue = false;
        return;
      case 'is':
        cell.inInline = false;
        return;
      case 'c': {
        const value = cellValue(cell, inline.text, shared, row);
        if (value === null) return;
        while (cells.length < cell.column) cells.push(null);
        cells[cell.column] = value;
        return;
      }
      case 'row':
        if (cells.length > 0) ready.push({ row, cells });
        cells = [];
        return;
      case 'sheetData':
        inSheetData = false;
        done = true;
        return;
      default:
        if (cell.inInline) inline.close(name);
    }
  });
  const characters = (text: string) => {
    if (cell.inValue) cell.value += text;
    else if (cell.inInline) inline.characters(text);
  };
  parser.on('text', characters);
  parser.on('cdata', characters);

  for await (const _ of feedXml(zip, entry, parser, pieceBytes)) {
    for (const read of ready) yield read;
    ready.length = 0;
    if (done) return;
  }
}
