import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { NUMERIC_COLUMNS, SHEET_COLUMNS } from '../../src/spreadsheets/sheet-layout.ts';

/**
 * LibreOffice headless (Debian's `libreoffice-calc-nogui`, which `.ci/run` installs) as the
 * spreadsheet tests run it, with the recipes docs/spreadsheets.md gives merchandisers.
 */

const run = promisify(execFile);

async function findSoffice(): Promise<string | null> {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'soffice');
    if (
      await fs.access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return null;
}

const soffice = await findSoffice();

/** A test's `skip`: false where `soffice` is installed, else why the test does not run. */
export const skipWithoutSoffice =
  soffice === null ? 'LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui' : false;

/**
 * The CSV filter's column types for the layout, every column in the export's order: 2 (Text) for
 * the text columns, so `00102065` keeps its zeros, 1 (Standard) for the numbers.
 */
export const CSV_COLUMN_TYPES = SHEET_COLUMNS.map(
  (column, index) => `${index + 1}/${NUMERIC_COLUMNS.has(column) ? 1 : 2}`,
).join('/');

/**
 * Reading the CSV export: separator `,` (44), quote `"` (34), UTF-8 (76), from line 1, the column
 * types above, numbers read in English (1033: `.` is the decimal point, whatever the machine's locale).
 */
export const CSV_IMPORT_FILTER = `Text - txt - csv (StarCalc):44,34,76,1,${CSV_COLUMN_TYPES},1033`;

/**
 * Writing a CSV: `,`, `"`, UTF-8, texts quoted only where needed, cells' values rather than as
 * shown (a number keeps its digits), no formulas.
 */
export const CSV_EXPORT_FILTER = 'Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false';

/**
 * Converts `file` to `extension` with LibreOffice, in a profile of its own under `dir`; a CSV is
 * read with `CSV_IMPORT_FILTER`. Returns the new file's path.
 */
export async function convertWithLibreOffice(
  file: string,
  extension: 'csv' | 'xlsx',
  dir: string,
): Promise<string> {
  if (soffice === null) throw new Error('soffice is not installed');
  const outDir = path.join(dir, `to-${extension}`);
  const args = [
    '--headless',
    '--norestore',
    `-env:UserInstallation=file://${path.join(dir, 'profile')}`,
    ...(extension === 'xlsx' ? [`--infilter=${CSV_IMPORT_FILTER}`] : []),
    '--convert-to',
    extension === 'csv' ? `csv:${CSV_EXPORT_FILTER}` : 'xlsx',
    '--outdir',
    outDir,
    file,
  ];
  await run(soffice, args, { timeout: 180_000 });
  return path.join(outDir, `${path.basename(file, path.extname(file))}.${extension}`);
}
