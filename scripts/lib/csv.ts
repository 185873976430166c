/** CSV as the scripts' labelled folders use it: a header line, commas, double-quoted cells. */

/** A data row of a CSV file: its line number (from 1) and its cells by column name, trimmed. */
export interface CsvRow {
  line: number;
  cells: Partial<Record<string, string>>;
}

/** The cells of one line; `"` opens a quoted cell, in which `""` is a quote and `,` no separator. */
function splitCsvLine(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

/** "a", "a" and "b", "a", "b" and "c": the columns a header lacks, as a refusal names them. */
function listColumns(columns: readonly string[]): string {
  const quoted = columns.map((column) => `"${column}"`);
  return quoted.length < 2 ? quoted.join('') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

/**
 * The rows of a CSV text whose first non-blank line is its header. Blank lines anywhere are skipped,
 * a cell the row lacks is absent, and a column named twice is read from its first place. A header
 * without every `required` column is refused, naming the file (`name`) and the columns asked for.
 */
export function readCsv(text: string, name: string, required: readonly string[]): CsvRow[] {
  const lines = text.split(/\r?\n/);
  const headerLine = Math.max(
    0,
    lines.findIndex((line) => line.trim() !== ''),
  );
  const header = splitCsvLine(lines[headerLine] ?? '').map((h) => h.trim());
  if (required.some((column) => !header.includes(column))) {
    throw new Error(`${name} needs ${listColumns(required)} column${required.length === 1 ? '' : 's'}`);
  }
  const columns = [...new Set(header)].map((column) => [column, header.indexOf(column)] as const);
  return lines.flatMap((line, i) => {
    if (i <= headerLine || line.trim() === '') return [];
    const values = splitCsvLine(line).map((c) => c.trim());
    const cells = Object.fromEntries(
      columns.flatMap(([column, k]) => (k < values.length ? [[column, values[k]!]] : [])),
    );
    return [{ line: i + 1, cells }];
  });
}

/**
 * A value as a CSV cell that readCsv reads back: quoted, quotes doubled, when it holds a comma or a
 * quote. Cells are read trimmed and a line at a time, so a value with a line break is refused.
 */
export function csvCell(value: string): string {
  if (/[\r\n]/.test(value)) throw new Error(`a CSV cell cannot hold a line break: ${JSON.stringify(value)}`);
  return /[",]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}
