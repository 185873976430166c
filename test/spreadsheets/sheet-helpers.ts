import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { csvRows } from '../../src/spreadsheets/csv-rows.ts';
import { sheetItems } from '../../src/spreadsheets/sheet-converter.ts';
import { xlsxRows } from '../../src/spreadsheets/xlsx-rows.ts';
import { bytesSource } from '../../src/spreadsheets/byte-source.ts';
import { XLSX_TYPE } from '../../src/spreadsheets/sheet-layout.ts';

/** What the spreadsheet tests share: reading an export's file back into items with the converter. */

export { XLSX_TYPE };

async function* once<T>(value: T): AsyncGenerator<T> {
  yield value;
}

/** The items of a CSV text, by the converter the CLI and the dashboard use; fails on any cell error. */
export async function csvItems(text: string): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of sheetItems(csvRows(once(text)))) {
    assert.deepEqual(item.cellErrors, [], `row ${item.row}`);
    items.push(JSON.parse(item.text));
  }
  return items;
}

/** The items of an XLSX file's bytes, by the same converter. */
export async function xlsxItems(bytes: Buffer): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const item of sheetItems(xlsxRows(bytesSource(bytes)))) {
    assert.deepEqual(item.cellErrors, [], `row ${item.row}`);
    items.push(JSON.parse(item.text));
  }
  return items;
}

/** The body of a 200 CSV export, its type and file name checked. */
export function csvBody(res: LightMyRequestResponse): string {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
  assert.equal(res.headers['content-disposition'], 'attachment; filename="products.csv"');
  return res.body;
}

/** The bytes of a 200 XLSX export, its type and file name checked. */
export function xlsxBody(res: LightMyRequestResponse): Buffer {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], XLSX_TYPE);
  assert.equal(res.headers['content-disposition'], 'attachment; filename="products.xlsx"');
  return res.rawPayload;
}
