import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ingest, startCliService, type CliService } from '../helpers/ingest-cli.ts';
import { product } from '../helpers/catalog-fixtures.ts';

/** `npm run ingest -- --dry-run` (docs/reference.md §10.3); runs and their Idempotency-Keys are in ingest-runs.test.ts. */

let service: CliService;
before(async () => {
  service = await startCliService();
});
after(async () => {
  await service?.stop();
});

/** The tenant's batch ids, from the service's list. */
async function batchIds(tenant: string): Promise<string[]> {
  const token = await service.token(tenant, 'ingestions:read');
  const res = await fetch(`${service.url}/products/ingestions?limit=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(res.status, 200);
  const page = (await res.json()) as { data: Array<{ batch_id: string }> };
  return page.data.map((batch) => batch.batch_id).sort();
}

async function writeLines(name: string, items: unknown[], extra: string[] = []): Promise<string> {
  const file = path.join(service.dir, `${name}-${randomUUID()}.jsonl`);
  await fs.writeFile(file, `${[...items.map((item) => JSON.stringify(item)), ...extra].join('\n')}\n`);
  return file;
}

const run = (file: string, tenant: string, ...args: string[]) =>
  ingest([file, '--url', service.url, '--tenant', tenant, '--batch-size', '2', ...args], {
    AUTH_JWT_SECRET: service.secret,
  });

describe('--dry-run', () => {
  void test('prints the summary, writes each item’s action and changes, and stores nothing', async () => {
    const tenant = `cli-dry-${randomUUID()}`;
    const kept = product();
    const renamed = product();
    const setup = await writeLines('setup', [kept, renamed]);
    assert.equal((await run(setup, tenant)).code, 0);
    const before = await batchIds(tenant);

    const fresh = product();
    const file = await writeLines(
      'dry',
      [kept, { ...renamed, name: 'New name' }, fresh, product({ style: 'modern' })],
      ['{"external_id": "broken",'],
    );
    const dry = await run(file, tenant, '--dry-run');
    assert.equal(dry.code, 2, dry.stderr);
    const previewPath = `${file}.preview.jsonl`;
    assert.match(
      dry.stderr.trim().split('\n').at(-1)!,
      new RegExp(
        `^dry run, nothing stored: 5 items: 1 create, 1 update, 2 invalid, 1 unchanged \\(per item in ${previewPath.replace(/[.]/g, '\\.')}\\), \\d+\\.\\d s$`,
      ),
    );
    // The changes come first, the unchanged item not among them, in the order the answers came.
    const listed = (dry.stderr.split('4 items would change or fail:\n')[1]?.split('dry run,')[0] ?? '')
      .trim()
      .split('\n')
      .map((line) => line.trim())
      .sort();
    assert.equal(listed.length, 4, dry.stderr);
    assert.equal(
      listed[0],
      `item 1 ${renamed.external_id as string}: update: name: "Linen sofa" → "New name"`,
    );
    assert.equal(listed[1], `item 2 ${fresh.external_id as string}: create`);
    assert.match(listed[2]!, /^item 3 ext-[0-9a-f-]+: invalid: style /);
    assert.match(listed[3]!, /^item 4: invalid: The item at line 5 is not valid JSON: /);
    const lines = (await fs.readFile(previewPath, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .sort((a, b) => (a.position as number) - (b.position as number));
    assert.deepEqual(
      lines.map(({ position, external_id, action, changes }) => ({ position, external_id, action, changes })),
      [
        { position: 0, external_id: kept.external_id, action: 'unchanged', changes: [] },
        { position: 1, external_id: renamed.external_id, action: 'update', changes: ['name'] },
        { position: 2, external_id: fresh.external_id, action: 'create', changes: [] },
        { position: 3, external_id: lines[3]!.external_id, action: 'invalid', changes: [] },
        { position: 4, external_id: null, action: 'invalid', changes: [] },
      ],
    );
    // The values of the change, as data and as a person reads them (docs/reference.md §11.2).
    assert.deepEqual(lines[1]!.diff, [{ path: 'name', op: 'change', from: renamed.name, to: 'New name' }]);
    assert.deepEqual(lines[1]!.shown, [`name: ${JSON.stringify(renamed.name)} → "New name"`]);
    assert.deepEqual(
      lines.map(({ diff }) => (diff as unknown[]).length),
      [0, 1, 0, 0, 0],
    );
    assert.deepEqual(lines[3]!.errors, [
      {
        field: 'style',
        code: 'invalid_value',
        message: (lines[3]!.errors as Array<{ message: string }>)[0]!.message,
      },
    ]);
    assert.equal((lines[4]!.errors as Array<{ code: string }>)[0]!.code, 'malformed_json');
    assert.equal(lines[4]!.line, 5);
    assert.deepEqual(await batchIds(tenant), before);
    assert.equal((await service.allProducts(tenant)).length, 2);
  });

  void test('standard input needs --preview', async () => {
    const res = await ingest(['-', '--url', service.url, '--tenant', 't', '--format', 'jsonl', '--dry-run'], {
      AUTH_JWT_SECRET: service.secret,
    });
    assert.equal(res.code, 1);
    assert.match(res.stderr, /--dry-run needs --preview <path>/);
  });
});
