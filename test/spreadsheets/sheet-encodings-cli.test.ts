import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCliService, type CliService } from '../helpers/ingest-cli.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { COLUMNS, DESCRIPTION, NAME, sofaRow, utf16, utf8, windows1252 } from './encoding-fixtures.ts';

/**
 * docs/spreadsheets.md#encodings through `npm run ingest`, against the service as a process: files as
 * Excel and LibreOffice write them, built here from each encoding's rules.
 */

/** The CSV text of two products, `separator`-separated, CRLF-ended as Excel writes it. */
const catalogText = (separator: string, header: readonly string[] = COLUMNS) =>
  `${[header, sofaRow('sofa-1', 's-1'), sofaRow('sofa-2', 's-2')].map((row) => row.join(separator)).join('\r\n')}\r\n`;

void describe('npm run ingest with files in other encodings', () => {
  let service: CliService;

  before(async () => {
    service = await startCliService();
  });

  after(async () => {
    await service.stop();
  });

  const run = (file: string, tenant: string, extra: string[] = []) => service.ingest(file, tenant, extra);

  /** Each stored product's id, name and description. */
  const stored = async (tenant: string) =>
    (await service.allProducts(tenant)).map(({ external_id, name, description }) => ({
      external_id,
      name,
      description,
    }));

  const BOTH = [
    { external_id: 'sofa-1', name: NAME, description: DESCRIPTION },
    { external_id: 'sofa-2', name: NAME, description: DESCRIPTION },
  ];

  async function write(name: string, bytes: Uint8Array): Promise<{ tenant: string; file: string }> {
    const tenant = `enc-${name.replace('.', '-')}-${randomUUID()}`;
    const file = path.join(service.dir, name.includes('.') ? `${tenant}-${name}` : `${tenant}.csv`);
    await fs.writeFile(file, bytes);
    return { tenant, file };
  }

  void test('Windows-1252: refused before any request naming row, column and byte; with --encoding windows-1252 imported exactly', async () => {
    const text = catalogText(',');
    const { tenant, file } = await write('cp1252', windows1252(text));
    const refused = await run(file, tenant);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(
        `^ingest: cannot read .*\\.csv: row 2, column "name": byte 0xE9 at offset ${text.indexOf('é')} is not UTF-8\\. ` +
          'Save the file as "CSV UTF-8" or pass --encoding windows-1252$',
        'm',
      ),
    );
    assert.match(refused.stderr, /0 submitted/);
    assert.deepEqual(await stored(tenant), []);

    const dryRun = await run(file, tenant, ['--dry-run']);
    assert.equal(dryRun.code, 1, dryRun.stderr);
    assert.match(dryRun.stderr, /row 2, column "name": byte 0xE9/);

    const imported = await run(file, tenant, ['--encoding', 'windows-1252']);
    assert.equal(imported.code, 0, imported.stderr);
    assert.deepEqual(await stored(tenant), BOTH);
  });

  void test('UTF-16 LE and BE with BOM, tab-separated UTF-16LE (Unicode Text), UTF-8 with BOM: imported exactly', async () => {
    const forms: Array<[string, Uint8Array]> = [
      ['utf16le', utf16(catalogText(','), 'le')],
      ['utf16be', utf16(catalogText(';'), 'be')],
      ['unicode-text', utf16(catalogText('\t'), 'le')],
      ['utf8bom', utf8(catalogText(','), { bom: true })],
    ];
    for (const [name, bytes] of forms) {
      const { tenant, file } = await write(name, bytes);
      const result = await run(file, tenant);
      assert.equal(result.code, 0, `${name}: ${result.stderr}`);
      assert.deepEqual(await stored(tenant), BOTH, name);
    }
  });

  void test('a header starting with ï»¿ (UTF-8 read as Latin-1 and written again) is refused saying so', async () => {
    const text = catalogText(',', ['\u00EF\u00BB\u00BFexternal_id', ...COLUMNS.slice(1)]);
    const { tenant, file } = await write('misread', utf8(text));
    const result = await run(file, tenant);
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /row 1, column "ï»¿external_id": the file is UTF-8 that another program read as Latin-1 \(Windows-1252\) and wrote again/,
    );
    assert.match(result.stderr, /Character set "Unicode \(UTF-8\)"/);
    assert.deepEqual(await stored(tenant), []);
  });

  void test('JSON and JSONL not in UTF-8 are refused before any request naming line and byte; --encoding reads them', async () => {
    const item = (id: string) =>
      JSON.stringify(
        product({
          external_id: id,
          name: NAME,
          description: DESCRIPTION,
          variants: [variant({ sku: `${id}-s` })],
        }),
      );
    const texts: Array<[string, string]> = [
      ['items.jsonl', `${item('sofa-1')}\n${item('sofa-2')}\n`],
      ['items.json', `[\n${item('sofa-1')},\n${item('sofa-2')}\n]\n`],
    ];
    for (const [name, text] of texts) {
      const { tenant, file } = await write(name, windows1252(text));
      const refused = await run(file, tenant);
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(
          `line ${name.endsWith('l') ? 1 : 2}: byte 0xE9 at offset ${text.indexOf('é')} is not UTF-8\\. ` +
            'Save the file as UTF-8 or pass --encoding windows-1252',
        ),
        name,
      );
      assert.deepEqual(await stored(tenant), [], name);
      const imported = await run(file, tenant, ['--encoding', 'cp1252']);
      assert.equal(imported.code, 0, imported.stderr);
      assert.deepEqual(await stored(tenant), BOTH, name);
    }
  });

  void test('an unknown --encoding label is a usage error', async () => {
    const { tenant, file } = await write('label', utf8(catalogText(',')));
    const result = await run(file, tenant, ['--encoding', 'klingon']);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^ingest: --encoding "klingon" is not an encoding label; give a WHATWG label/m,
    );
    assert.match(result.stderr, /usage: npm run ingest/);
  });
});
