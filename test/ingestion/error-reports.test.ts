import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testServiceForFile } from '../helpers/test-service.ts';
import { product, variant } from '../helpers/catalog-fixtures.ts';
import { assertProblem, ingestAndRead } from '../helpers/assertions.ts';
import { createErrorReports, ERROR_WALK_PAGE } from '../../src/ingestion/error-reports.service.ts';

/** The error reports of a batch (docs/reference.md §10.4): the summary by code, and every error as CSV. */

type Item = Record<string, unknown>;

const svc = testServiceForFile();

/** A valid product without the top-level fields `missing`. */
function without(...missing: string[]): Item {
  const item = product();
  for (const field of missing) delete item[field];
  return item;
}

const summaryUrl = (batchId: string) => `/products/ingestions/${batchId}/errors/summary`;
const errorsUrl = (batchId: string) => `/products/ingestions/${batchId}/errors`;

async function csvOf(token: string, batchId: string, accept = 'text/csv', query = '') {
  return svc.request({ method: 'GET', url: `${errorsUrl(batchId)}${query}`, token, headers: { accept } });
}

void describe('GET /products/ingestions/{batch_id}/errors/summary', () => {
  void test('codes by count then code; ≤5 fields by frequency then name; the ≤5 lowest indices', async () => {
    const token = await svc.token(svc.tenant('summary'));
    const items = [
      product(), // 0: valid
      without('name', 'description'), // 1
      without('name'), // 2
      without('name', 'style', 'type'), // 3
      without('sub_type'), // 4
      without('description'), // 5
      without('type'), // 6
      without('external_id'), // 7
      product({ variants: [variant({ color: 'Teal', price: -1 })] }), // 8
      product({ style: 'Baroque' }), // 9
      product({ variants: [variant({ depth: -1 })] }), // 10
    ];
    const { batchId, final } = await ingestAndRead(svc, token, items);
    assert.equal(final.failed, 10);

    const res = await svc.request({ method: 'GET', url: summaryUrl(batchId), token });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(res.json(), {
      failed_items: 10,
      data: [
        // name ×3; description and type ×2 (ties by field); then of the three ×1, the first two by name.
        {
          code: 'required',
          count: 10,
          fields: ['name', 'description', 'type', 'external_id', 'style'],
          sample_indices: [1, 2, 3, 4, 5],
        },
        // Two codes with two errors each: by code.
        { code: 'invalid_value', count: 2, fields: ['style', 'variants[0].color'], sample_indices: [8, 9] },
        {
          code: 'out_of_range',
          count: 2,
          fields: ['variants[0].depth', 'variants[0].price'],
          sample_indices: [8, 10],
        },
      ],
    });
  });

  void test('a batch without errors: no failed items, no codes', async () => {
    const token = await svc.token(svc.tenant('summary-clean'));
    const { batchId } = await ingestAndRead(svc, token, [product()]);
    const res = await svc.request({ method: 'GET', url: summaryUrl(batchId), token });
    assert.deepEqual(res.json(), { failed_items: 0, data: [] });
  });
});

void describe('GET /products/ingestions/{batch_id}/errors as text/csv', () => {
  void test('exact bytes: header row, CRLF, RFC 4180 quoting of commas, quotes and line breaks, values unaltered', async () => {
    const token = await svc.token(svc.tenant('csv'));
    const items = [
      { ...without('name'), external_id: 'he said "hi", then\r\nleft', variants: [variant({ sku: 'x,y' })] },
      {
        ...product({ external_id: 'plain' }),
        variants: [variant({ sku: 'a\nb' }), variant({ sku: 'a\nb' })],
      },
      { ...without('description'), external_id: '=HYPERLINK("x")', variants: [variant({ sku: '-1+2' })] },
      42,
      product(),
      { ...without('name', 'description'), external_id: '@both', variants: [variant({ sku: 's' })] },
    ];
    const { batchId } = await ingestAndRead(svc, token, items);

    const res = await csvOf(token, batchId);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.equal(res.headers['content-disposition'], `attachment; filename="batch-${batchId}-errors.csv"`);
    assert.equal(
      res.body,
      'index,external_id,sku,field,code,message\r\n' +
        '0,"he said ""hi"", then\r\nleft","x,y",name,required,name is required.\r\n' +
        '1,plain,"a\nb",variants[1].sku,duplicate_key,' +
        '"variants[1].sku repeats the sku ""a\nb"" of an earlier variant in this item."\r\n' +
        '2,"=HYPERLINK(""x"")",-1+2,description,required,description is required.\r\n' +
        '3,,,,invalid_type,The value must be an object.\r\n' +
        '5,@both,s,name,required,name is required.\r\n' +
        '5,@both,s,description,required,description is required.\r\n',
    );
  });

  void test('every error of every item in index order across several internal pages; limit and cursor ignored', async () => {
    const token = await svc.token(svc.tenant('csv-many'));
    const count = 2 * ERROR_WALK_PAGE + 101;
    const items = Array.from({ length: count }, (_, i) =>
      i % 7 === 0 ? product() : without('name', 'description', 'style'),
    );
    const { batchId, errors } = await ingestAndRead(svc, token, items);
    const failed = items.filter((_, i) => i % 7 !== 0).length;
    assert.equal(errors.length, failed);
    assert.ok(failed > 2 * ERROR_WALK_PAGE);

    const expected = [
      'index,external_id,sku,field,code,message',
      ...errors.flatMap((record) =>
        (record.errors as Array<Record<string, string>>).map((e) =>
          [record.index, record.external_id, record.sku, e.field, e.code, e.message].join(','),
        ),
      ),
    ].join('\r\n');
    const whole = await csvOf(token, batchId);
    assert.equal(whole.body, `${expected}\r\n`);
    assert.equal(whole.body.split('\r\n').length, 1 + 3 * failed + 1);
    for (const query of ['?limit=1', '?limit=1&cursor=bogus', '?limit=0&unknown=1']) {
      assert.equal((await csvOf(token, batchId, 'text/csv', query)).body, whole.body, query);
    }
  });

  void test('the errors are read a page at a time', async () => {
    const tenant = svc.tenant('csv-pages');
    const walker = await svc.token(tenant);
    const count = ERROR_WALK_PAGE + 50;
    const { batchId } = await ingestAndRead(
      svc,
      walker,
      Array.from({ length: count }, () => without('name')),
    );
    const pages = await createErrorReports({ db: svc.service.db }).walkErrors(tenant, batchId);
    const sizes: number[] = [];
    let next = 0;
    for await (const page of pages) {
      sizes.push(page.length);
      assert.deepEqual(
        page.map((row) => row.index),
        Array.from({ length: page.length }, (_, i) => next + i),
      );
      next += page.length;
    }
    assert.deepEqual(sizes, [ERROR_WALK_PAGE, 50]);
  });

  void test('Accept decides: text/csv ranked above application/json gives CSV; otherwise JSON', async () => {
    const token = await svc.token(svc.tenant('csv-accept'));
    const { batchId } = await ingestAndRead(svc, token, [without('name')]);
    const cases: Array<[string, 'csv' | 'json']> = [
      ['text/csv', 'csv'],
      ['text/*', 'csv'],
      ['text/csv, */*', 'csv'],
      ['application/json;q=0.5, text/csv', 'csv'],
      ['text/csv;q=0.9, application/json;q=0.8', 'csv'],
      ['application/json', 'json'],
      ['*/*', 'json'],
      ['', 'json'],
      ['text/csv, application/json', 'json'],
      ['application/json, text/csv', 'json'],
      ['text/csv;q=0.5, application/json', 'json'],
      ['text/csv;q=0', 'json'],
      ['text/html', 'json'],
    ];
    for (const [accept, kind] of cases) {
      const res = await svc.request({
        method: 'GET',
        url: errorsUrl(batchId),
        token,
        headers: accept ? { accept } : {},
      });
      assert.equal(res.statusCode, 200, `${accept}: ${res.body}`);
      assert.equal(
        String(res.headers['content-type']).split(';')[0],
        kind === 'csv' ? 'text/csv' : 'application/json',
        accept,
      );
    }
  });
});

void test('both reports: 404 problem+json for an unknown, malformed or another tenant’s batch; 403 without ingestions:read', async () => {
  const tenant = svc.tenant('reports-404');
  const token = await svc.token(tenant);
  const other = await svc.token(svc.tenant('reports-other'));
  const { batchId } = await ingestAndRead(svc, token, [without('name')]);
  const writer = await svc.token(tenant, { scope: 'ingestions:write catalog:read' });
  const reports = [
    {
      url: summaryUrl,
      read: (caller: string, id: string) =>
        svc.request({ method: 'GET', url: summaryUrl(id), token: caller }),
    },
    { url: errorsUrl, read: (caller: string, id: string) => csvOf(caller, id) },
  ];
  for (const { url, read } of reports) {
    for (const [id, caller] of [
      [randomUUID(), token],
      ['not-a-uuid', token],
      [batchId, other],
    ] as const) {
      assertProblem(await read(caller, id), { slug: 'not-found', instance: url(id) });
    }
    assertProblem(await read(writer, batchId), { slug: 'forbidden', instance: url(batchId) });
  }
});
