import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unzipSync } from 'fflate';
import { startCliService, type CliService } from '../helpers/ingest-cli.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { convertWithLibreOffice, skipWithoutSoffice as skip } from '../helpers/libreoffice.ts';
import type { PreviewLine } from '../../src/client/preview-runner.ts';

/**
 * A merchandiser's round trip, end to end: the service's CSV export, one price edited, opened in
 * LibreOffice with docs/spreadsheets.md's recipe (UTF-8, text columns) and saved as XLSX, then
 * `npm run ingest` of that XLSX through the HTTP API and the worker: the dry run and the import
 * change exactly that price, the zeros of `00102065` and the non-ASCII names intact.
 */

/** Ids and texts that a spreadsheet program's defaults would change. */
const CATALOG = [
  product({
    external_id: '00017',
    name: 'ÄPPLARÖ bench, "outdoor"',
    description: 'Acacia.\nStain-resistant: ÅÄÖ åäö ß €',
    variants: [
      variant({ sku: '00102065', name: 'Brun', price: 1299.99 }),
      variant({ sku: '00102066', name: 'Grå', price: 1349.5, depth: 95.25 }),
    ],
  }),
  product({
    external_id: 'lo-table',
    name: 'Table Łódź',
    variants: [variant({ sku: '0042', price: 450, images: undefined })],
  }),
];

void describe('CSV export → LibreOffice → XLSX → npm run ingest', { skip }, () => {
  let service: CliService;

  before(async () => {
    // LibreOffice's conversions share the machine with it: a busy one starts the service slowly.
    service = await startCliService({}, 180_000);
  });

  after(async () => {
    await service.stop();
  });

  const run = (file: string, tenant: string, extra: string[] = []) => service.ingest(file, tenant, extra);

  const stored = async (tenant: string) =>
    (await service.allProducts(tenant)).map(({ created_at: _c, updated_at: _u, ...rest }) => rest);

  void test('the dry run and the import change exactly the edited price; zeros and non-ASCII intact', async () => {
    const tenant = `sheet-lo-${randomUUID()}`;
    const jsonl = path.join(service.dir, `${tenant}.jsonl`);
    await fs.writeFile(jsonl, CATALOG.map((item) => `${JSON.stringify(item)}\n`).join(''));
    const created = await run(jsonl, tenant);
    assert.equal(created.code, 0, created.stderr);
    const before = await stored(tenant);

    const res = await fetch(`${service.url}/products/export`, {
      headers: {
        authorization: `Bearer ${await service.token(tenant, 'catalog:read')}`,
        accept: 'text/csv',
      },
    });
    assert.equal(res.status, 200);
    const exported = await res.text();
    const edited = exported.replace(',1349.5,', ',1199,');
    assert.equal(edited.split(',1199,').length, 2, 'one price edited');
    const csv = path.join(service.dir, `${tenant}.csv`);
    await fs.writeFile(csv, edited);
    const xlsx = await convertWithLibreOffice(csv, 'xlsx', path.join(service.dir, tenant));

    // Well under the 16 KiB pieces in which exceljs's streaming reader parses a part (it split a
    // non-ASCII character at their edge): this test does not depend on that reader's fix.
    const parts = unzipSync(await fs.readFile(xlsx));
    for (const part of ['xl/worksheets/sheet1.xml', 'xl/sharedStrings.xml']) {
      assert.ok((parts[part]?.length ?? 0) < 12 * 1024, `${part}: ${parts[part]?.length} bytes`);
    }

    const dry = await run(xlsx, tenant, ['--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    const preview = (await fs.readFile(`${xlsx}.preview.jsonl`, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as PreviewLine);
    assert.deepEqual(
      preview.map(({ external_id, action, shown, errors }) => ({ external_id, action, shown, errors })),
      [
        { external_id: '00017', action: 'update', shown: ['variants[1].price: 1349.5 → 1199'], errors: [] },
        { external_id: 'lo-table', action: 'unchanged', shown: [], errors: [] },
      ],
    );
    assert.deepEqual(await stored(tenant), before, 'a dry run stores nothing');

    const imported = await run(xlsx, tenant);
    assert.equal(imported.code, 0, imported.stderr);
    const expected = structuredClone(before) as Array<{ variants: Array<{ price: number }> }>;
    expected[0]!.variants[1]!.price = 1199;
    assert.deepEqual(await stored(tenant), expected);
    assert.deepEqual(
      (await stored(tenant)).map((p) => [
        p.external_id,
        p.name,
        (p.variants as Array<{ sku: string }>).map((v) => v.sku),
      ]),
      [
        ['00017', 'ÄPPLARÖ bench, "outdoor"', ['00102065', '00102066']],
        ['lo-table', 'Table Łódź', ['0042']],
      ],
    );
  });
});
