import { NUMERIC_COLUMNS } from './sheet-layout.ts';

/**
 * One cell as a reader hands it over: text, a number (an XLSX numeric cell), or null for an empty
 * cell, which means the field is absent. An empty string is a cell written `""` in CSV or an empty
 * text cell in XLSX (docs/reference.md §11.5).
 */
export type SheetCell = string | number | null;

/**
 * The first characters that make a spreadsheet program read a CSV cell as a formula, or that hide one
 * (OWASP's CSV injection list), and the guard itself: `'` is what a guarded cell starts with, so a
 * text that starts with it is guarded too, or the import would strip its own `'`.
 */
const FORMULA_STARTS = new Set(['=', '+', '-', '@', '\t', '\r', "'"]);

/** A CSV export's text cell with one `'` before it when it could run as a formula (docs/reference.md §11.5). */
export function guardFormula(text: string): string {
  return FORMULA_STARTS.has(text.charAt(0)) ? `'${text}` : text;
}

/** Undoes `guardFormula` on a CSV import's cell: one leading `'` removed where a guarded character follows it. */
export function unguardFormula(text: string): string {
  return text.charAt(0) === "'" && FORMULA_STARTS.has(text.charAt(1)) ? text.slice(1) : text;
}

/**
 * A number as a plain decimal with `.`, never in exponent form (`1e21` → `1000000000000000000000`),
 * which spreadsheet programs and the import read back as the same number.
 */
export function plainDecimal(value: number): string {
  const text = String(value);
  const exponent = text.indexOf('e');
  if (exponent === -1) return text;
  // JavaScript's shortest round-trip digits, with the point moved by the exponent.
  const negative = text.startsWith('-');
  const mantissa = text.slice(negative ? 1 : 0, exponent);
  const point =
    (mantissa.includes('.') ? mantissa.indexOf('.') : mantissa.length) + Number(text.slice(exponent + 1));
  const digits = mantissa.replace('.', '');
  const plain =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return negative ? `-${plain}` : plain;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
/** A comma anywhere, or dots grouping digits by three (`1.299.000`): a local way of writing a number. */
const LOCAL_NUMBER = /^[+-]?[\d.,\s\u00a0\u202f']*\d[\d.,\s\u00a0\u202f']*$/;

/** What a cell gives its field: nothing (absent), a value, or why it cannot be read (an item error). */
export type CellReading = { absent: true } | { absent: false; value: unknown } | { error: string };

const ABSENT: CellReading = { absent: true };

/**
 * The value `cell` gives the field of `column`. Text columns take text as it is and an XLSX number
 * as its decimal text. Numeric columns take an XLSX number as it is and text holding a plain decimal
 * (`1299.5`); a decimal comma or thousands separators (`1.299,00`, `1,299`) is an error that says
 * so rather than a number read wrongly, and any other text is passed on for the service to refuse
 * as the wrong type, as it would be in JSON.
 */
export function readCell(column: string, cell: SheetCell): CellReading {
  if (cell === null) return ABSENT;
  if (!NUMERIC_COLUMNS.has(column)) {
    return { absent: false, value: typeof cell === 'number' ? plainDecimal(cell) : cell };
  }
  if (typeof cell === 'number') return { absent: false, value: cell };
  const text = cell.trim();
  if (DECIMAL.test(text)) return { absent: false, value: Number(text) };
  if (LOCAL_NUMBER.test(text) && /[,\s\u00a0\u202f']|\.\d{3}\./.test(text)) {
    return {
      error:
        `${JSON.stringify(cell)} is written with a decimal comma or thousands separators; ` +
        'write numbers as plain decimals with "." and no grouping, e.g. 1299.00',
    };
  }
  return { absent: false, value: cell };
}
