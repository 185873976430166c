import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** One labelled photo of a dataset folder. */
export interface ManifestEntry {
  /** Path as written in the manifest, relative to the folder. */
  file: string;
  absolutePath: string;
  label: string;
  source: string;
  /** The `empty_room` column when it says `yes` or `no` (absent for `unknown` or no column). */
  emptyRoom?: boolean;
}

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

/**
 * Reads `<dir>/manifest.csv` (a header with at least `file` and `label`; `source` and `empty_room`
 * are read when present). A missing manifest, a row
 * without a file or a label, or a manifest of no rows is refused with the line at fault: the scripts
 * that read it run for minutes, and should not stop half-way on a photo named `undefined`.
 */
export async function readManifest(dir: string): Promise<ManifestEntry[]> {
  const manifest = path.join(dir, 'manifest.csv');
  let text: string;
  try {
    text = await readFile(manifest, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new Error(`${manifest} does not exist: a labelled folder needs one, with columns file,label`);
  }
  const lines = text.split(/\r?\n/);
  // Blank lines before the header are skipped, as blank lines anywhere are.
  const headerLine = Math.max(
    0,
    lines.findIndex((line) => line.trim() !== ''),
  );
  const header = splitCsvLine(lines[headerLine] ?? '').map((h) => h.trim());
  const fileCol = header.indexOf('file');
  const labelCol = header.indexOf('label');
  const sourceCol = header.indexOf('source');
  const emptyCol = header.indexOf('empty_room');
  if (fileCol < 0 || labelCol < 0) throw new Error(`${manifest} needs "file" and "label" columns`);
  const entries = lines.flatMap((line, i) => {
    if (i <= headerLine || line.trim() === '') return [];
    const cells = splitCsvLine(line).map((c) => c.trim());
    const file = cells[fileCol] ?? '';
    const label = cells[labelCol] ?? '';
    if (file === '' || label === '') throw new Error(`${manifest} line ${i + 1}: needs a file and a label`);
    const empty = (cells[emptyCol] ?? '').toLowerCase();
    const entry: ManifestEntry = {
      file,
      absolutePath: path.resolve(dir, file),
      label,
      source: cells[sourceCol] ?? '',
    };
    if (empty === 'yes' || empty === 'no') entry.emptyRoom = empty === 'yes';
    return [entry];
  });
  if (entries.length === 0) throw new Error(`${manifest} lists no photos`);
  return entries;
}
