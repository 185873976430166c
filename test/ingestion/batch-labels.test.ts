import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { testServicesForFile, type TestService } from '../helpers/test-service.ts';
import { product } from '../helpers/catalog-fixtures.ts';
import { assertNothingStored, assertProblem, STATUS_FIELDS } from '../helpers/assertions.ts';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { listBatches } from '../../src/ingestion/batches/batch.repository.ts';

/** docs/reference.md §11.1: batch labels on submission, in the status record, the list filter and webhooks. */

const PATH = '/products/ingestions';
const [svc, hooks] = testServicesForFile([
  {},
  { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2' },
] as const);
const receivers: WebhookReceiver[] = [];
after(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

const withLabel = (label: string | undefined) =>
  label === undefined ? PATH : `${PATH}?label=${encodeURIComponent(label)}`;

const post = (token: string, label: string | undefined, items: unknown[], key?: string, s = svc) =>
  s.request({
    method: 'POST',
    url: withLabel(label),
    token,
    json: { items },
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });

function acceptedId(res: LightMyRequestResponse): string {
  assert.equal(res.statusCode, 202, res.body);
  return res.json<{ batch_id: string }>().batch_id;
}

const status = async (token: string, batchId: string) => {
  const res = await svc.request({ method: 'GET', url: `${PATH}/${batchId}`, token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<Record<string, unknown>>();
};

/** The list's entries for `query` (a whole query string), as [batch_id, label] pairs. */
async function listed(token: string, query: string): Promise<Array<[string, unknown]>> {
  const res = await svc.request({ method: 'GET', url: `${PATH}?${query}`, token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: Array<Record<string, unknown>> }>().data.map((b) => [String(b.batch_id), b.label]);
}

async function fresh(s: TestService = svc) {
  const tenant = s.tenant('labels');
  return { tenant, token: await s.token(tenant) };
}

const labelError = (message: string) => ({ field: 'label', code: 'invalid_format', message });

describe('a label given at submission', () => {
  test('is in the status record exactly as sent; a batch without one has the nine fields only', async () => {
    const { token } = await fresh();
    const label = 'Katalog Ü 🛋 2026-11 "spring" 1/3';
    const labelled = acceptedId(await post(token, label, [product()]));
    const plain = acceptedId(await post(token, undefined, [product()]));
    const record = await status(token, labelled);
    assert.equal(record.label, label);
    assert.deepEqual(Object.keys(record).sort(), [...STATUS_FIELDS, 'label'].sort());
    assert.deepEqual(Object.keys(await status(token, plain)).sort(), [...STATUS_FIELDS].sort());
    // Terminal too: the worker's updates keep it.
    assert.equal((await svc.waitForTerminal(token, labelled)).label, label);
  });

  test('of 200 code points is taken (astral characters count once), even with %, _ and \\', async () => {
    const { token } = await fresh();
    const label = `%_\\${'🛋'.repeat(197)}`;
    assert.equal([...label].length, 200);
    const id = acceptedId(await post(token, label, [product()]));
    assert.equal((await status(token, id)).label, label);
  });

  test('empty, over 200 code points, or with a control character: 400 at field label, nothing stored', async () => {
    const { token } = await fresh();
    const cases: Array<[string, string]> = [
      ['', 'label must not be empty.'],
      ['x'.repeat(201), 'label must be at most 200 characters.'],
      [`${'🛋'.repeat(200)}x`, 'label must be at most 200 characters.'],
      ['line\nbreak', 'label must not hold control characters.'],
      ['tab\there', 'label must not hold control characters.'],
      ['nul\u0000', 'label must not hold control characters.'],
      ['del\u007f', 'label must not hold control characters.'],
      ['c1\u0085', 'label must not hold control characters.'],
    ];
    for (const [label, message] of cases) {
      const res = await post(token, label, [product()]);
      const body = assertProblem(res, {
        slug: 'validation-error',
        instance: withLabel(label).split('?')[0]!,
        errors: [{ field: 'label', code: 'invalid_format' }],
      });
      assert.deepEqual(body.errors, [labelError(message)], JSON.stringify(label));
    }
    const twice = await svc.request({
      method: 'POST',
      url: `${PATH}?label=a&label=b`,
      token,
      json: { items: [1] },
    });
    assertProblem(twice, {
      slug: 'validation-error',
      instance: PATH,
      errors: [{ field: 'label', code: 'invalid_type' }],
    });
    await assertNothingStored(svc, token);
  });

  test('a refused label does not consume the Idempotency-Key', async () => {
    const { token } = await fresh();
    const items = [product()];
    assert.equal((await post(token, '', items, 'label-key')).statusCode, 400);
    const res = await post(token, 'good', items, 'label-key');
    const id = acceptedId(res);
    assert.equal(res.headers['idempotent-replayed'], undefined);
    assert.equal((await status(token, id)).label, 'good');
  });

  test('is not part of the Idempotency-Key hash: a replay answers as the first request did and keeps its label', async () => {
    const { token } = await fresh();
    const items = [product(), product()];
    const first = await post(token, 'first', items, 'k-1');
    const id = acceptedId(first);
    for (const label of ['second', undefined]) {
      const again = await post(token, label, items, 'k-1');
      assert.equal(again.statusCode, 202, again.body);
      assert.deepEqual(again.json(), first.json());
      assert.equal(again.headers.location, first.headers.location);
      assert.equal(again.headers['idempotent-replayed'], 'true');
    }
    // The same key, another body: still a mismatch, whatever the label.
    assertProblem(await post(token, 'first', [product()], 'k-1'), {
      slug: 'idempotency-key-mismatch',
      instance: PATH,
    });
    assert.equal((await status(token, id)).label, 'first');
    assert.deepEqual(await listed(token, 'limit=100'), [[id, 'first']]);
    // A batch first sent without a label keeps having none.
    const bare = acceptedId(await post(token, undefined, [product()], 'k-2'));
    assert.equal((await post(token, 'late', [product()], 'k-2')).statusCode, 422);
    assert.equal('label' in (await status(token, bare)), false);
  });
});

describe('GET /products/ingestions?label=', () => {
  test('lists the batches whose label starts with the text, case-sensitive, % _ and \\ as plain characters', async () => {
    const { token } = await fresh();
    const labels = [
      'feed.csv 1/2',
      'feed.csv 2/2',
      'Feed.csv 1/1',
      'fee%d',
      'fee_d',
      'feexd',
      'a\\b',
      'ab',
      'ﬁ',
    ];
    const ids = new Map<string, string>();
    for (const label of labels) ids.set(label, acceptedId(await post(token, label, [product()])));
    const unlabelled = acceptedId(await post(token, undefined, [product()]));
    const only = (...names: string[]) => names.map((name) => [ids.get(name)!, name]).reverse();

    assert.deepEqual(await listed(token, 'label=feed'), only('feed.csv 1/2', 'feed.csv 2/2'));
    assert.deepEqual(
      await listed(token, `label=${encodeURIComponent('feed.csv 2/2')}`),
      only('feed.csv 2/2'),
    );
    assert.deepEqual(await listed(token, 'label=Feed'), only('Feed.csv 1/1'));
    assert.deepEqual(await listed(token, 'label=FEED'), []);
    assert.deepEqual(await listed(token, 'label=fee%25'), only('fee%d'));
    assert.deepEqual(await listed(token, 'label=fee_'), only('fee_d'));
    assert.deepEqual(await listed(token, `label=${encodeURIComponent('a\\')}`), only('a\\b'));
    assert.deepEqual(await listed(token, 'label=a'), only('a\\b', 'ab'));
    // No folding of any kind: the ligature is not "fi".
    assert.deepEqual(await listed(token, 'label=fi'), []);
    assert.deepEqual(await listed(token, 'label=feed.csv%201%2F2x'), []);

    // Without the filter every batch is listed, the unlabelled one without a label property.
    const all = await svc.request({ method: 'GET', url: `${PATH}?limit=100`, token });
    const data = all.json<{ data: Array<Record<string, unknown>> }>().data;
    assert.equal(data.length, labels.length + 1);
    assert.equal(data[0]!.batch_id, unlabelled);
    assert.equal('label' in data[0]!, false);
    assert.deepEqual(Object.keys(data[1]!).sort(), [...STATUS_FIELDS, 'label'].sort());
  });

  test('pages with the cursor inside the filter, and combines with status', async () => {
    const { token } = await fresh();
    const run = [];
    for (let k = 1; k <= 3; k++) run.push(acceptedId(await post(token, `run ${k}/3`, [product()])));
    acceptedId(await post(token, 'other', [product()]));
    for (const id of run) await svc.waitForTerminal(token, id);
    const first = await svc.request({ method: 'GET', url: `${PATH}?label=run&limit=2`, token });
    const page = first.json<{ data: Array<{ batch_id: string }>; next_cursor: string | null }>();
    assert.deepEqual(
      page.data.map((b) => b.batch_id),
      [run[2], run[1]],
    );
    assert.ok(page.next_cursor);
    const rest = await listed(token, `label=run&limit=2&cursor=${encodeURIComponent(page.next_cursor)}`);
    assert.deepEqual(rest, [[run[0], 'run 1/3']]);
    assert.deepEqual(
      (await listed(token, 'label=run&status=completed')).map(([id]) => id),
      [run[2], run[1], run[0]],
    );
    assert.deepEqual(await listed(token, 'label=run&status=failed'), []);
  });

  test('another tenant’s labelled batches are never listed', async () => {
    const a = await fresh();
    const b = await fresh();
    acceptedId(await post(a.token, 'shared name', [product()]));
    assert.deepEqual(await listed(b.token, 'label=shared'), []);
  });

  test('an empty, too long or control-character filter: 400 at parameter label', async () => {
    const { token } = await fresh();
    const cases: Array<[string, string]> = [
      ['label=', 'label must not be empty.'],
      [`label=${'x'.repeat(201)}`, 'label must be at most 200 characters.'],
      ['label=a%0Ab', 'label must not hold control characters.'],
    ];
    for (const [query, message] of cases) {
      const res = await svc.request({ method: 'GET', url: `${PATH}?${query}`, token });
      const body = assertProblem(res, {
        slug: 'validation-error',
        instance: PATH,
        errors: [{ field: 'label', code: 'invalid_format' }],
      });
      assert.deepEqual(body.errors, [labelError(message)]);
    }
  });

  test('the filter is a range scan of the label index', async () => {
    const { db } = svc.service;
    const plans: string[] = [];
    await db.transaction(async (tx) => {
      // Tables this small are read whole unless told not to: what matters is that the index can serve.
      await tx.query('SET LOCAL enable_seqscan = off');
      const explaining = {
        exec: tx.exec.bind(tx),
        async query<R>(sql: string, params?: readonly unknown[]): Promise<R[]> {
          const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
          plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'));
          return [];
        },
      };
      await listBatches(explaining, {
        tenantId: 't',
        before: null,
        limit: 10,
        status: null,
        labelPrefix: 'fe_%',
      });
    });
    assert.match(plans[0]!, /batches_by_tenant_label/);
    assert.match(plans[0]!, /label >= 'fe_%'::text/);
  });
});

describe('webhooks', () => {
  test('a labelled batch’s payload data carries its label, an unlabelled one’s none', async () => {
    const hook = await startReceiver();
    receivers.push(hook);
    const { token } = await fresh(hooks);
    const created = await hooks.request({
      method: 'POST',
      url: '/webhook-endpoints',
      token,
      json: { url: hook.url },
    });
    assert.equal(created.statusCode, 201, created.body);
    const labelled = acceptedId(await post(token, 'hooked 1/1', [product()], undefined, hooks));
    const labelledRecord = await hooks.waitForTerminal(token, labelled);
    const plain = acceptedId(await post(token, undefined, [product()], undefined, hooks));
    const plainRecord = await hooks.waitForTerminal(token, plain);
    const got = await hook.waitFor(2);
    const bodies = got.map((g) => JSON.parse(g.body) as { data: Record<string, unknown> });
    const byId = new Map(bodies.map((b) => [b.data.batch_id, b.data]));
    assert.deepEqual(byId.get(labelled), labelledRecord);
    assert.equal(byId.get(labelled)!.label, 'hooked 1/1');
    assert.deepEqual(byId.get(plain), plainRecord);
    assert.equal('label' in byId.get(plain)!, false);
  });
});
