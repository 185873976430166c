import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathToFileURL } from 'node:url';
import { PRODUCERS, workbookParts, zipParts, type FixtureSheet } from './xlsx-fixtures.ts';

/**
 * The command-line client's XLSX reader on 100,000 rows of non-ASCII text, in LibreOffice's layout
 * (shared strings after the sheet, data descriptors): every row read with its exact text, and memory
 * flat: the child's heap after a full collection is the same at row 20,000 as at the last row (the
 * shared strings, read before the first row, are in both); its peak RSS (`VmHWM`) is reported.
 */

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const run = promisify(execFile);

const rowOf = (i: number) => [
  `p-${i}`,
  `LOBERGET / BLYSKÄR, white ${i}`,
  `ÄPPLARÖ 😀 桌子 ${i % 100}`,
  100 + i / 100,
];

/** The child: reads `file` through the client's file source, counts rows, keeps the asked ones. */
const CHILD = `
import { readFileSync } from 'node:fs';
import { openFileSource } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/client/file-source.ts')).href)};
import { xlsxRows } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/spreadsheets/xlsx-rows.ts')).href)};
const [file, asked, rows] = process.argv.slice(1);
const total = Number(rows);
const heap = [];
const wanted = new Set(JSON.parse(asked));
const source = await openFileSource(file);
let count = 0;
const samples = {};
try {
  for await (const row of xlsxRows(source)) {
    count++;
    if (wanted.has(row.row)) samples[row.row] = row.cells;
    if (count === 20_000 || count === total) {
      globalThis.gc();
      heap.push(process.memoryUsage().heapUsed / 1024 / 1024);
    }
  }
} finally {
  await source.close();
}
const peak = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]);
process.stdout.write(JSON.stringify({ count, samples, heapMiB: heap, peakMiB: peak / 1024 }));
`;

async function readInChild(file: string, rows: number[], total: number) {
  const { stdout } = await run(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      '--input-type=module',
      '--eval',
      CHILD,
      file,
      JSON.stringify(rows),
      String(total),
    ],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as {
    count: number;
    samples: Record<string, unknown[]>;
    heapMiB: number[];
    peakMiB: number;
  };
}

async function writeWorkbook(file: string, count: number): Promise<void> {
  const sheet: FixtureSheet = {
    name: 'Catalog',
    rows: [
      ['external_id', 'name', 'description', 'price'],
      ...Array.from({ length: count }, (_, i) => rowOf(i)),
    ],
  };
  await fs.writeFile(
    file,
    zipParts(workbookParts([sheet], PRODUCERS.libreoffice), { dataDescriptors: true }),
  );
}

void test(
  '100,000 rows of non-ASCII text: every row exact, memory flat',
  { skip: process.platform !== 'linux' && 'reads /proc' },
  async (t) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'xlsx-memory-'));
    t.after(() => fs.rm(dir, { recursive: true, force: true }));
    const large = path.join(dir, 'large.xlsx');
    await writeWorkbook(large, 100_000);
    const sampled = [1, 2, 3, 4097, 50_001, 99_999, 100_001];

    const largeRead = await readInChild(large, sampled, 100_001);

    assert.equal(largeRead.count, 100_001);
    assert.deepEqual(largeRead.samples, {
      1: ['external_id', 'name', 'description', 'price'],
      2: rowOf(0),
      3: rowOf(1),
      4097: rowOf(4095),
      50001: rowOf(49_999),
      99999: rowOf(99_997),
      100001: rowOf(99_999),
    });
    const { size } = await fs.stat(large);
    const [early, last] = largeRead.heapMiB as [number, number];
    t.diagnostic(
      `100,000 rows (${(size / 1024 / 1024).toFixed(1)} MiB file): peak RSS ${largeRead.peakMiB.toFixed(0)} MiB; heap after a collection ${early.toFixed(1)} MiB at row 20,000, ${last.toFixed(1)} MiB at the last`,
    );
    // Holding the rows read would add tens of MiB between the two (100,000 rows of four cells).
    assert.ok(last - early < 4, `the heap grew from ${early.toFixed(1)} to ${last.toFixed(1)} MiB`);
  },
);
