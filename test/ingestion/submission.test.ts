import { brotliCompressSync, gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../helpers/test-service.ts';
import { bodyOverLimit, product } from '../helpers/catalog-fixtures.ts';
import {
  allProducts,
  assertNothingStored,
  assertProblem,
  assertStatusRecord,
  counterValues,
  fieldCodes,
  ingestAndRead,
  requestIdOf,
} from '../helpers/assertions.ts';

/** Operation 1 (`POST /products/ingestions`) from outside: docs/reference.md §2 and §4. */

const PATH = '/products/ingestions';
const BATCH_STATUSES = [
  'accepted',
  'validating',
  'processing',
  'completed',
  'completed_with_errors',
  'failed',
];

let svc: TestService;
before(async () => {
  svc = await startTestService();
});
after(async () => {
  await svc?.stop();
});

async function freshToken(): Promise<string> {
  return svc.token(svc.tenant('submit'));
}

/** Posts a raw body with a content type. */
function post(token: string, body: string | Buffer, contentType = 'application/json') {
  return svc.request({ method: 'POST', url: PATH, token, body, headers: { 'content-type': contentType } });
}

void describe('202 accepted', () => {
  void test('answers exactly {batch_id, received_count} with Location, and the batch is readable at once', async () => {
    const token = await freshToken();
    const res = await svc.request({
      method: 'POST',
      url: PATH,
      token,
      json: { items: [product(), product()] },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.match(String(res.headers['content-type']), /^application\/json(;|$)/);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['batch_id', 'received_count']);
    assert.equal(typeof body.batch_id, 'string');
    assert.ok((body.batch_id as string).length > 0);
    assert.equal(body.received_count, 2);
    assert.equal(res.headers.location, `/products/ingestions/${body.batch_id as string}`);

    const status = await svc.request({ method: 'GET', url: res.headers.location, token });
    assert.equal(status.statusCode, 200, status.body);
    const record = status.json<Record<string, unknown>>();
    assertStatusRecord(record);
    assert.equal(record.batch_id, body.batch_id);
    assert.equal(record.received_count, 2);
    assert.ok(BATCH_STATUSES.includes(record.status as string), `status ${String(record.status)}`);
  });

  void test('a body with a charset, or in another letter case, is JSON too', async () => {
    const token = await freshToken();
    const body = JSON.stringify({ items: [product()] });
    for (const type of [
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'application/json; charset=US-ASCII',
      'Application/JSON',
    ]) {
      const res = await post(token, body, type);
      assert.equal(res.statusCode, 202, `${type}: ${res.body}`);
      assert.equal(res.json<{ received_count: number }>().received_count, 1);
    }
  });

  void test('a JSON body declared in a charset other than UTF-8 is 415, and nothing is stored', async () => {
    const token = await freshToken();
    const body = JSON.stringify({ items: [product()] });
    for (const type of ['application/json; charset=utf-16', 'application/json; charset="latin1"']) {
      assertProblem(await post(token, body, type), { slug: 'unsupported-media-type', instance: PATH });
    }
    await assertNothingStored(svc, token);
  });

  void test('a compressed body is 415, not malformed JSON, and nothing is stored', async () => {
    const token = await freshToken();
    const json = JSON.stringify({ items: [product()] });
    for (const [encoding, body] of [
      ['gzip', gzipSync(json)],
      ['br', brotliCompressSync(json)],
      ['gzip, identity', gzipSync(json)],
    ] as const) {
      const res = await svc.request({
        method: 'POST',
        url: PATH,
        token,
        body,
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
      });
      assertProblem(res, { slug: 'unsupported-media-type', instance: PATH });
      assert.equal(res.headers['accept-encoding'], 'identity');
      assert.equal(
        res.json<{ detail: string }>().detail,
        `Content-Encoding ${encoding} is not accepted: send the body uncompressed.`,
      );
    }
    await assertNothingStored(svc, token);
    // Identity is no encoding at all.
    const plain = await svc.request({
      method: 'POST',
      url: PATH,
      token,
      body: json,
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    });
    assert.equal(plain.statusCode, 202, plain.body);
  });

  void test('exactly 1000 items are accepted and all upserted', async () => {
    const token = await freshToken();
    const items = Array.from({ length: 1000 }, () => product());
    const { final, errors } = await ingestAndRead(svc, token, items);
    assertStatusRecord(final);
    assert.equal(final.status, 'completed');
    assert.deepEqual(counterValues(final), [1000, 1000, 0, 1000, 0]);
    assert.deepEqual(errors, []);
    const stored = await allProducts(svc, token);
    assert.deepEqual(
      stored.map((p) => p.external_id),
      items.map((p) => p.external_id as string).sort(),
    );
  });

  void test('the status record stays consistent while the batch runs, and only moves forward', async () => {
    const token = await freshToken();
    const items = Array.from({ length: 1000 }, (_, n) => (n % 3 === 0 ? product({ name: n }) : product()));
    const batchId = await svc.submit(token, items);
    const snapshots: Array<Record<string, unknown>> = [];
    for (;;) {
      const res = await svc.request({ method: 'GET', url: `${PATH}/${batchId}`, token });
      assert.equal(res.statusCode, 200);
      const record = res.json<Record<string, unknown>>();
      snapshots.push(record);
      if (['completed', 'completed_with_errors', 'failed'].includes(record.status as string)) break;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    let previous: Record<string, unknown> | undefined;
    for (const record of snapshots) {
      assertStatusRecord(record);
      const [received, ok, bad, upserted, failed] = counterValues(record) as [
        number,
        number,
        number,
        number,
        number,
      ];
      assert.equal(received, 1000);
      assert.ok(ok + bad <= received && upserted + failed <= received, JSON.stringify(record));
      assert.ok(upserted <= ok, JSON.stringify(record));
      if (record.status === 'accepted') assert.deepEqual([ok, bad, upserted, failed], [0, 0, 0, 0]);
      if (record.status === 'processing') assert.equal(ok + bad, received, JSON.stringify(record));
      if (previous) {
        const order = BATCH_STATUSES.indexOf(record.status as string);
        assert.ok(order >= BATCH_STATUSES.indexOf(previous.status as string), 'states only move forward');
        const earlier = counterValues(previous);
        counterValues(record).forEach((value, i) =>
          assert.ok(value >= earlier[i]!, 'counters never go back'),
        );
        assert.ok(String(record.updated_at) >= String(previous.updated_at), 'updated_at never goes back');
        const changed =
          record.status !== previous.status ||
          JSON.stringify(counterValues(record)) !== JSON.stringify(counterValues(previous));
        if (changed)
          assert.ok(String(record.updated_at) > String(previous.updated_at), 'a change moves updated_at');
      }
      previous = record;
    }
    assert.equal(previous!.status, 'completed_with_errors');
    assert.deepEqual(counterValues(previous!), [1000, 666, 334, 666, 334]);
    assert.ok(snapshots.length > 1, 'the batch was seen before it ended');
  });

  void test('items of any JSON type are accepted, then a non-object is invalid_type at "" with null keys', async () => {
    const token = await freshToken();
    const items = ['not an object', 42, null, true, [product()], product()];
    const res = await svc.request({ method: 'POST', url: PATH, token, json: { items } });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json<{ received_count: number }>().received_count, 6);
    const batchId = res.json<{ batch_id: string }>().batch_id;
    const final = await svc.waitForTerminal(token, batchId);
    assert.equal(final.status, 'completed_with_errors');
    assert.deepEqual(counterValues(final), [6, 1, 5, 1, 5]);
    const errors = await svc.allErrors(token, batchId);
    assert.deepEqual(
      errors.map((record) => record.index),
      [0, 1, 2, 3, 4],
    );
    for (const record of errors) {
      assert.deepEqual(Object.keys(record).sort(), ['errors', 'external_id', 'index', 'sku']);
      assert.deepEqual(fieldCodes(record.errors), [{ field: '', code: 'invalid_type' }]);
      assert.equal(record.external_id, null);
      assert.equal(record.sku, null);
    }
  });

  void test('the body is read as JSON.parse reads it: the last of duplicate "items" keys wins', async () => {
    const token = await freshToken();
    const item = product();
    const res = await post(token, `{"items":"not yet","items":[${JSON.stringify(item)}]}`);
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(res.json<{ received_count: number }>().received_count, 1);
    const final = await svc.waitForTerminal(token, res.json<{ batch_id: string }>().batch_id);
    assert.deepEqual([final.status, ...counterValues(final)], ['completed', 1, 1, 0, 1, 0]);
    assert.deepEqual(
      (await allProducts(svc, token)).map((p) => p.external_id),
      [item.external_id],
    );

    assertProblem(await post(token, `{"items":[${JSON.stringify(product())}],"items":null}`), {
      slug: 'validation-error',
      instance: PATH,
      errors: [{ field: 'items', code: 'invalid_type' }],
    });
  });

  void test('bytes that are not UTF-8 are 400 malformed-json naming the byte offset; nothing is stored', async () => {
    const token = await freshToken();
    const item = product({ name: 'Sofa MARK' });
    const text = Buffer.from(JSON.stringify({ items: [item] }));
    const at = text.indexOf('MARK');
    const body = Buffer.concat([text.subarray(0, at), Buffer.from([0xff, 0xc3]), text.subarray(at + 4)]);
    const problem = assertProblem(await post(token, body), { slug: 'malformed-json', instance: PATH });
    assert.equal(
      problem.detail,
      `The request body is not UTF-8: byte 0xFF at byte offset ${at} (line 1, column ${at + 1}) ` +
        'is not a UTF-8 character. Send JSON as UTF-8.',
    );
    await assertNothingStored(svc, token);
  });

  void test('a repeated submission is a new batch, and both are processed', async () => {
    const token = await freshToken();
    const item = product();
    const body = JSON.stringify({ items: [item] });
    const first = await post(token, body);
    const second = await post(token, body);
    assert.equal(first.statusCode, 202);
    assert.equal(second.statusCode, 202);
    const firstId = first.json<{ batch_id: string }>().batch_id;
    const secondId = second.json<{ batch_id: string }>().batch_id;
    assert.notEqual(firstId, secondId);
    for (const id of [firstId, secondId]) {
      const final = await svc.waitForTerminal(token, id);
      assert.equal(final.status, 'completed');
      assert.deepEqual(counterValues(final), [1, 1, 0, 1, 0]);
    }
    const list = await svc.request({ method: 'GET', url: PATH, token });
    assert.deepEqual(
      list.json<{ data: Array<{ batch_id: string }> }>().data.map((b) => b.batch_id),
      [secondId, firstId],
    );
    assert.deepEqual(
      (await allProducts(svc, token)).map((p) => p.external_id),
      [item.external_id],
    );
  });
});

void describe('400 validation-error on the envelope (nothing stored)', () => {
  const cases: Array<{ name: string; body: string; errors: Array<{ field: string; code: string }> }> = [
    // docs/reference.md §4: an envelope error's field is `items` or the unknown property's name.
    { name: 'body is an array', body: '[{"items":[]}]', errors: [{ field: 'items', code: 'invalid_type' }] },
    { name: 'body is a string', body: '"items"', errors: [{ field: 'items', code: 'invalid_type' }] },
    { name: 'body is a number', body: '42', errors: [{ field: 'items', code: 'invalid_type' }] },
    { name: 'body is null', body: 'null', errors: [{ field: 'items', code: 'invalid_type' }] },
    { name: 'items missing', body: '{}', errors: [{ field: 'items', code: 'required' }] },
    {
      name: 'items is an object',
      body: '{"items":{"a":1}}',
      errors: [{ field: 'items', code: 'invalid_type' }],
    },
    { name: 'items is a string', body: '{"items":"x"}', errors: [{ field: 'items', code: 'invalid_type' }] },
    { name: 'items is null', body: '{"items":null}', errors: [{ field: 'items', code: 'invalid_type' }] },
    { name: 'items empty', body: '{"items":[]}', errors: [{ field: 'items', code: 'too_few_items' }] },
    {
      name: 'an extra top-level property',
      body: '{"items":[{}],"tenant_id":"other"}',
      errors: [{ field: 'tenant_id', code: 'unknown_field' }],
    },
    {
      name: '1001 items',
      body: JSON.stringify({ items: Array.from({ length: 1001 }, () => product()) }),
      errors: [{ field: 'items', code: 'too_many_items' }],
    },
    {
      name: 'half a million items (more than the outline counts)',
      body: `{"items":[${'0,'.repeat(499_999)}0]}`,
      errors: [{ field: 'items', code: 'too_many_items' }],
    },
    {
      name: 'a top-level array of half a million elements',
      body: `[${'0,'.repeat(499_999)}0]`,
      errors: [{ field: 'items', code: 'invalid_type' }],
    },
  ];

  for (const { name, body, errors } of cases) {
    void test(name, async () => {
      const token = await freshToken();
      assertProblem(await post(token, body), { slug: 'validation-error', instance: PATH, errors });
      await assertNothingStored(svc, token);
    });
  }

  void test('a body that is not an object says what the body must be', async () => {
    const token = await freshToken();
    const body = assertProblem(await post(token, '[]'), {
      slug: 'validation-error',
      instance: PATH,
      errors: [{ field: 'items', code: 'invalid_type' }],
    });
    assert.deepEqual(body.errors, [
      {
        field: 'items',
        code: 'invalid_type',
        message: 'The body must be a JSON object with an "items" array.',
      },
    ]);
    await assertNothingStored(svc, token);
  });

  void test('items missing and an unknown property are both reported', async () => {
    const token = await freshToken();
    const body = assertProblem(await post(token, '{"itmes":[1]}'), {
      slug: 'validation-error',
      instance: PATH,
      errors: 'any',
    });
    assert.deepEqual(
      fieldCodes(body.errors).sort((a, b) => a.field.localeCompare(b.field)),
      [
        { field: 'items', code: 'required' },
        { field: 'itmes', code: 'unknown_field' },
      ],
    );
    await assertNothingStored(svc, token);
  });

  void test('JSON nested deeper than 64 levels is refused before it is stored; 64 levels are accepted', async () => {
    const token = await freshToken();
    // The body object is level 1 and `items` level 2, so 63 brackets reach exactly 64 levels.
    const nested = (levels: number) => `{"items":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    for (const levels of [65, 100, 100_000]) {
      assertProblem(await post(token, nested(levels)), {
        slug: 'validation-error',
        instance: PATH,
        errors: [{ field: 'items', code: 'out_of_range' }],
      });
    }
    // The member the nesting is in is named, an unknown one too; a body that is not an object: items.
    const deep = '['.repeat(70) + ']'.repeat(70);
    for (const [body, field] of [
      [`{"items":[1],"extra":${deep}}`, 'extra'],
      [`[${deep}]`, 'items'],
    ] as const) {
      assertProblem(await post(token, body), {
        slug: 'validation-error',
        instance: PATH,
        errors: [{ field, code: 'out_of_range' }],
      });
    }
    await assertNothingStored(svc, token);

    const ok = await post(token, nested(64));
    assert.equal(ok.statusCode, 202, ok.body);
    assert.equal(ok.json<{ received_count: number }>().received_count, 1);
  });
});

void describe('other refusals (nothing stored)', () => {
  void test('malformed JSON is 400 malformed-json', async () => {
    const token = await freshToken();
    for (const body of ['{"items":', '{"items":[1,]}', "{'items':[1]}", '{"items":[1]} x', '']) {
      assertProblem(await post(token, body), { slug: 'malformed-json', instance: PATH });
    }
    await assertNothingStored(svc, token);
  });

  void test('a body that is not application/json is 415 unsupported-media-type', async () => {
    const token = await freshToken();
    const body = JSON.stringify({ items: [product()] });
    for (const type of [
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
    ]) {
      assertProblem(await post(token, body, type), { slug: 'unsupported-media-type', instance: PATH });
    }
    assertProblem(await post(token, 'items=1', 'application/x-www-form-urlencoded'), {
      slug: 'unsupported-media-type',
      instance: PATH,
    });
    await assertNothingStored(svc, token);
  });

  void test('a body over MAX_BODY_BYTES (64 MiB by default) is 413 payload-too-large', async () => {
    const token = await freshToken();
    assertProblem(await post(token, bodyOverLimit()), { slug: 'payload-too-large', instance: PATH });
    await assertNothingStored(svc, token);
  });
});

void test('each problem type URI serves a human-readable page', async () => {
  for (const slug of ['validation-error', 'malformed-json', 'unsupported-media-type', 'payload-too-large']) {
    const res = await svc.request({ method: 'GET', url: `/problems/${slug}` });
    assert.equal(res.statusCode, 200, slug);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.ok(res.body.length > 50);
  }
});

void describe('X-Request-Id', () => {
  void test('a safe id of up to 128 characters is echoed, on success and on errors', async () => {
    const token = await freshToken();
    const ids = ['req-1234.abcd', 'a'.repeat(128)];
    for (const id of ids) {
      const accepted = await svc.request({
        method: 'POST',
        url: PATH,
        token,
        json: { items: [product()] },
        headers: { 'x-request-id': id },
      });
      assert.equal(accepted.statusCode, 202);
      assert.equal(accepted.headers['x-request-id'], id);
      const refused = await svc.request({
        method: 'POST',
        url: PATH,
        token,
        json: { items: [] },
        headers: { 'x-request-id': id },
      });
      assert.equal(refused.statusCode, 400);
      assert.equal(refused.headers['x-request-id'], id);
      const unauthorized = await svc.request({ method: 'GET', url: PATH, headers: { 'x-request-id': id } });
      assert.equal(unauthorized.statusCode, 401);
      assert.equal(unauthorized.headers['x-request-id'], id);
    }
  });

  void test('an unsafe or too long id is replaced by a new one', async () => {
    const token = await freshToken();
    for (const sent of ['a b', '<script>', 'a'.repeat(129), 'x"y']) {
      const res = await svc.request({ method: 'GET', url: PATH, token, headers: { 'x-request-id': sent } });
      assert.equal(res.statusCode, 200);
      const id = requestIdOf(res);
      assert.notEqual(id, sent);
      assert.match(id, /^[A-Za-z0-9._~:@+=-]+$/);
    }
  });

  void test('every response carries one, and two requests without one get different ids', async () => {
    const token = await freshToken();
    const responses = [
      await svc.request({ method: 'GET', url: PATH, token }),
      await svc.request({ method: 'GET', url: PATH, token }),
      await post(token, '{', 'application/json'),
      await post(token, '{}', 'text/plain'),
      await svc.request({ method: 'GET', url: `${PATH}/00000000-0000-7000-8000-000000000000`, token }),
      await svc.request({ method: 'GET', url: '/no/such/route', token }),
      await svc.request({ method: 'GET', url: PATH }),
    ];
    const ids = responses.map(requestIdOf);
    assert.equal(new Set(ids).size, ids.length, 'each request gets its own id');
  });
});
