import { readFile } from 'node:fs/promises';
import path from 'node:path';

/** One labelled photo of a dataset folder. */
export interface ManifestEntry {
  /** Path as written in the manifest, relative to the folder. */
  file: string;
  absolutePath: string;
  label: string;
  source: string;
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

/** Reads `<dir>/manifest.csv` (a header with at least `file` and `label`). */
export async function readManifest(dir: string): Promise<ManifestEntry[]> {
  const text = await readFile(path.join(dir, 'manifest.csv'), 'utf8');
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const header = splitCsvLine(lines[0] ?? '').map((h) => h.trim());
  const fileCol = header.indexOf('file');
  const labelCol = header.indexOf('label');
  const sourceCol = header.indexOf('source');
  if (fileCol < 0 || labelCol < 0) throw new Error(`${dir}/manifest.csv needs "file" and "label" columns`);
  return lines.slice(1).map((line) => {
    const cells = splitCsvLine(line);
    const file = cells[fileCol]!.trim();
    return {
      file,
      absolutePath: path.resolve(dir, file),
      label: cells[labelCol]!.trim(),
      source: sourceCol >= 0 ? (cells[sourceCol]?.trim() ?? '') : '',
    };
  });
}
