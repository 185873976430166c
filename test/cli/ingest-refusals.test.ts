import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { product } from '../helpers/catalog-fixtures.ts';
import { ingest, readErrorLines, startCliService, type CliService } from '../helpers/ingest-cli.ts';

/** The smallest body limit the service can be given (src/config.ts), so a too-large item stays small. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

void describe('npm run ingest: items the service refuses on their own', () => {
  let service: CliService;

  before(async () => {
    service = await startCliService({ MAX_BODY_BYTES: String(MAX_BODY_BYTES) });
  });
  after(async () => {
    await service.stop();
  });

  /** Ingests `items` (JSON texts) as a JSONL file for a fresh tenant; returns the run and that tenant. */
  async function ingestLines(name: string, lines: string[]) {
    const tenant = `cli-${randomUUID()}`;
    const file = path.join(service.dir, name);
    await fs.writeFile(file, `${lines.join('\n')}\n`);
    const run = await ingest([file, '--url', service.url, '--tenant', tenant, '--quiet'], {
      AUTH_JWT_SECRET: service.secret,
    });
    return { run, tenant, errorsPath: `${file}.errors.jsonl` };
  }

  void test('an item larger than the service accepts (413) is an error line; the items around it are upserted', async () => {
    const big = JSON.stringify(product({ description: 'x'.repeat(MAX_BODY_BYTES + 1024) }));
    const { run, tenant, errorsPath } = await ingestLines('big.jsonl', [
      JSON.stringify(product()),
      big,
      JSON.stringify(product()),
    ]);

    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `^3 items: 2 upserted, 1 failed, 0 replayed \\(errors in ${errorsPath}\\), \\d+\\.\\d s\\n$`,
      ),
    );
    assert.deepEqual(await readErrorLines(errorsPath), [
      {
        position: 1,
        batch_id: null,
        index: null,
        external_id: null,
        sku: null,
        errors: [
          {
            field: '',
            code: 'payload_too_large',
            message:
              'The item alone is larger than the service accepts: 413 The request body is larger than this operation accepts: at most 32 MiB (33554432 bytes).',
          },
        ],
      },
    ]);
    assert.equal((await service.allProducts(tenant)).length, 2);
  });

  void test('an item nested 70 levels deep among valid items: the service refuses the batch, the client only that item', async () => {
    let nested: unknown = 1;
    for (let level = 0; level < 70; level++) nested = [nested];
    const items = Array.from({ length: 9 }, (_, position) =>
      JSON.stringify(position === 6 ? product({ description: nested }) : product()),
    );
    const { run, tenant, errorsPath } = await ingestLines('deep.jsonl', items);

    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        `^9 items: 8 upserted, 1 failed, 0 replayed \\(errors in ${errorsPath}\\), \\d+\\.\\d s\\n$`,
      ),
    );
    assert.deepEqual(await readErrorLines(errorsPath), [
      {
        position: 6,
        batch_id: null,
        index: null,
        external_id: null,
        sku: null,
        errors: [{ field: 'items', code: 'out_of_range', message: 'JSON nesting is deeper than 64 levels.' }],
      },
    ]);
    assert.equal((await service.allProducts(tenant)).length, 8);
  });
});
