import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServices, type TestService } from '../helpers/test-service.ts';

/** docs/reference.md §10.1, managing endpoints: CRUD, the secret shown once, every bad input, tenants apart. */

let svc: TestService;
let strict: TestService;

before(async () => {
  [svc, strict] = await startTestServices([{ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' }, {}] as const);
});

after(async () => {
  await Promise.all([svc?.stop(), strict?.stop()]);
});

const ALL_EVENTS = ['batch.completed', 'batch.completed_with_errors', 'batch.failed'];
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function create(service: TestService, token: string, json: unknown) {
  return service.request({ method: 'POST', url: '/webhook-endpoints', token, json });
}

async function list(service: TestService, token: string) {
  const res = await service.request({ method: 'GET', url: '/webhook-endpoints', token });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<{ data: Array<Record<string, unknown>>; next_cursor: string | null }>();
}

describe('POST /webhook-endpoints', () => {
  test('201 with the secret, Location, all events by default; reads never show the secret', async () => {
    const token = await strict.token(strict.tenant());
    const res = await create(strict, token, { url: 'https://hooks.example.com/in' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), [
      'created_at',
      'description',
      'enabled',
      'events',
      'id',
      'secret',
      'url',
    ]);
    assert.equal(body.url, 'https://hooks.example.com/in');
    assert.deepEqual(body.events, ALL_EVENTS);
    assert.equal(body.description, null);
    assert.equal(body.enabled, true);
    assert.match(String(body.secret), SECRET);
    assert.equal(Buffer.from(String(body.secret).slice(6), 'base64').length, 32);
    assert.match(String(body.created_at), ISO);
    assert.equal(res.headers.location, `/webhook-endpoints/${String(body.id)}`);

    const { secret, ...shown } = body;
    assert.ok(secret);
    const one = await strict.request({ method: 'GET', url: `/webhook-endpoints/${String(body.id)}`, token });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), shown);
    assert.deepEqual(await list(strict, token), { data: [shown], next_cursor: null });
  });

  test('events and description as given', async () => {
    const token = await strict.token(strict.tenant());
    const res = await create(strict, token, {
      url: 'https://hooks.example.com/in',
      events: ['batch.failed'],
      description: 'ERP importer',
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json<{ events: string[] }>().events, ['batch.failed']);
    assert.equal(res.json<{ description: string }>().description, 'ERP importer');
  });

  const bad: Array<[string, unknown, string, string]> = [
    ['no url', {}, '', 'required'],
    ['a relative url', { url: '/hooks' }, 'url', 'invalid_format'],
    ['not a url', { url: 'hooks at example' }, 'url', 'invalid_format'],
    ['a plain http url', { url: 'http://hooks.example.com/in' }, 'url', 'https_required'],
    ['an ftp url', { url: 'ftp://hooks.example.com/in' }, 'url', 'https_required'],
    ['credentials in the url', { url: 'https://u:p@hooks.example.com/in' }, 'url', 'invalid_format'],
    // URI syntax, but no request can be sent there (the URL parser refuses them).
    ['a port above 65535', { url: 'https://hooks.example.com:65536/in' }, 'url', 'invalid_format'],
    ['an escaped space in the host', { url: 'https://hooks%20example.com/in' }, 'url', 'invalid_format'],
    ['five numbers as the host', { url: 'https://1.2.3.4.5/in' }, 'url', 'invalid_format'],
    ['a broken punycode host', { url: 'https://xn--abc/in' }, 'url', 'invalid_format'],
    ['url not a string', { url: 42 }, 'url', 'invalid_type'],
    ['empty events', { url: 'https://h.example/x', events: [] }, 'events', 'too_few_items'],
    [
      'an unknown event',
      { url: 'https://h.example/x', events: ['batch.started'] },
      'events[0]',
      'invalid_value',
    ],
    [
      'the same event twice',
      { url: 'https://h.example/x', events: ['batch.failed', 'batch.failed'] },
      'events',
      'invalid_value',
    ],
    ['events not an array', { url: 'https://h.example/x', events: 'batch.failed' }, 'events', 'invalid_type'],
    ['an unknown property', { url: 'https://h.example/x', secret: 'mine' }, 'secret', 'unknown_field'],
    [
      'a description too long',
      { url: 'https://h.example/x', description: 'x'.repeat(501) },
      'description',
      'invalid_format',
    ],
  ];
  for (const [name, body, field, code] of bad) {
    test(`400 for ${name}, and nothing stored`, async () => {
      const token = await strict.token(strict.tenant());
      const res = await create(strict, token, body);
      assert.equal(res.statusCode, 400, res.body);
      const problem = res.json<{ type: string; errors: Array<{ field: string; code: string }> }>();
      assert.equal(problem.type, 'http://service.test/problems/validation-error');
      assert.ok(
        problem.errors.some((e) => e.code === code && (field === '' || e.field === field)),
        JSON.stringify(problem.errors),
      );
      assert.deepEqual((await list(strict, token)).data, []);
    });
  }

  test('the messages say what to change: an unusable host or port, an event listed twice', async () => {
    const token = await strict.token(strict.tenant());
    const errorsOf = async (body: unknown) => {
      const res = await create(strict, token, body);
      assert.equal(res.statusCode, 400, res.body);
      return res.json<{ errors: unknown[] }>().errors;
    };
    assert.deepEqual(await errorsOf({ url: 'https://hooks.example.com:65536/in' }), [
      {
        field: 'url',
        code: 'invalid_format',
        message: 'url must be a URL a request can be sent to: its host or port is not valid.',
      },
    ]);
    assert.deepEqual(
      await errorsOf({
        url: 'https://h.example/x',
        events: ['batch.failed', 'batch.completed', 'batch.failed'],
      }),
      [
        {
          field: 'events',
          code: 'invalid_value',
          message: 'events must not list a value twice: events[0] and events[2] are the same.',
        },
      ],
    );
    assert.deepEqual((await list(strict, token)).data, []);
  });

  test('http is accepted with WEBHOOK_ALLOW_PRIVATE_HOSTS=true', async () => {
    const token = await svc.token(svc.tenant());
    const res = await create(svc, token, { url: 'http://127.0.0.1:9/hooks' });
    assert.equal(res.statusCode, 201, res.body);
  });

  test('malformed JSON 400, another media type 415', async () => {
    const token = await strict.token(strict.tenant());
    const post = (body: string, type: string) =>
      strict.request({
        method: 'POST',
        url: '/webhook-endpoints',
        token,
        body,
        headers: { 'content-type': type },
      });
    const malformed = await post('{"url":', 'application/json');
    assert.equal(malformed.statusCode, 400);
    assert.equal(malformed.json<{ type: string }>().type, 'http://service.test/problems/malformed-json');
    assert.equal((await post('url=https://h.example', 'text/plain')).statusCode, 415);
  });

  test('at most 10 per tenant: the 11th is 409 conflict', async () => {
    const tenant = strict.tenant();
    const token = await strict.token(tenant);
    const made = await Promise.all(
      Array.from({ length: 11 }, (_, i) => create(strict, token, { url: `https://h.example/${i}` })),
    );
    assert.deepEqual(made.map((res) => res.statusCode).sort(), [...Array<number>(10).fill(201), 409]);
    const conflict = made.find((res) => res.statusCode === 409)!;
    assert.equal(conflict.json<{ type: string }>().type, 'http://service.test/problems/conflict');
    // Another tenant is not affected by this one's count.
    const other = await strict.token(strict.tenant());
    assert.equal((await create(strict, other, { url: 'https://h.example/other' })).statusCode, 201);
    // A deletion frees a place.
    const id = made.find((res) => res.statusCode === 201)!.json<{ id: string }>().id;
    const del = await strict.request({ method: 'DELETE', url: `/webhook-endpoints/${id}`, token });
    assert.equal(del.statusCode, 204);
    assert.equal((await create(strict, token, { url: 'https://h.example/again' })).statusCode, 201);
  });
});

describe('list, read, delete, rotate', () => {
  test('the list pages with cursors, oldest first', async () => {
    const token = await strict.token(strict.tenant());
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await create(strict, token, { url: `https://h.example/${i}` })).json<{ id: string }>().id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await strict.request({
        method: 'GET',
        url: `/webhook-endpoints?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        token,
      });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json<{ data: Array<{ id: string }>; next_cursor: string | null }>();
      seen.push(...page.data.map((endpoint) => endpoint.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ids);
  });

  test('bad list queries are 400 on the parameter', async () => {
    const token = await strict.token(strict.tenant());
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=nonsense', 'cursor'],
      ['page=2', 'page'],
    ] as const) {
      const res = await strict.request({ method: 'GET', url: `/webhook-endpoints?${query}`, token });
      assert.equal(res.statusCode, 400, query);
      assert.equal(res.json<{ errors: Array<{ field: string }> }>().errors[0]!.field, field, query);
    }
  });

  test('another tenant’s, an unknown or a malformed id is 404 on every route', async () => {
    const owner = await strict.token(strict.tenant());
    const id = (await create(strict, owner, { url: 'https://h.example/x' })).json<{ id: string }>().id;
    const intruder = await strict.token(strict.tenant());
    const deliveryId = '0190a000-0000-7000-8000-000000000000';
    for (const target of [id, '0190a000-0000-7000-8000-000000000001', 'not-a-uuid']) {
      for (const [method, url] of [
        ['GET', `/webhook-endpoints/${target}`],
        ['DELETE', `/webhook-endpoints/${target}`],
        ['POST', `/webhook-endpoints/${target}/rotate-secret`],
        ['GET', `/webhook-endpoints/${target}/deliveries`],
        ['GET', `/webhook-endpoints/${target}/deliveries?limit=0`],
        ['POST', `/webhook-endpoints/${target}/deliveries/${deliveryId}/redeliver`],
      ] as const) {
        const res = await strict.request({ method, url, token: intruder });
        assert.equal(res.statusCode, 404, `${method} ${url}`);
        assert.equal(res.json<{ type: string }>().type, 'http://service.test/problems/not-found');
        assert.ok(!res.body.includes(id) || url.includes(id), 'no id of another tenant in the answer');
      }
    }
    // Still there for its owner.
    assert.equal(
      (await strict.request({ method: 'GET', url: `/webhook-endpoints/${id}`, token: owner })).statusCode,
      200,
    );
  });

  test('an unknown delivery of an own endpoint is 404', async () => {
    const token = await strict.token(strict.tenant());
    const id = (await create(strict, token, { url: 'https://h.example/x' })).json<{ id: string }>().id;
    const res = await strict.request({
      method: 'POST',
      url: `/webhook-endpoints/${id}/deliveries/0190a000-0000-7000-8000-000000000000/redeliver`,
      token,
    });
    assert.equal(res.statusCode, 404);
  });

  test('DELETE is 204 and the endpoint is gone', async () => {
    const token = await strict.token(strict.tenant());
    const id = (await create(strict, token, { url: 'https://h.example/x' })).json<{ id: string }>().id;
    const del = await strict.request({ method: 'DELETE', url: `/webhook-endpoints/${id}`, token });
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    assert.equal(
      (await strict.request({ method: 'GET', url: `/webhook-endpoints/${id}`, token })).statusCode,
      404,
    );
    assert.equal(
      (await strict.request({ method: 'DELETE', url: `/webhook-endpoints/${id}`, token })).statusCode,
      404,
    );
  });

  test('rotate-secret answers a new secret, shown nowhere else', async () => {
    const token = await strict.token(strict.tenant());
    const created = (await create(strict, token, { url: 'https://h.example/x' })).json<{
      id: string;
      secret: string;
    }>();
    const res = await strict.request({
      method: 'POST',
      url: `/webhook-endpoints/${created.id}/rotate-secret`,
      token,
    });
    assert.equal(res.statusCode, 200);
    const body = res.json<{ secret: string }>();
    assert.deepEqual(Object.keys(body), ['secret']);
    assert.match(body.secret, SECRET);
    assert.notEqual(body.secret, created.secret);
    const read = await strict.request({ method: 'GET', url: `/webhook-endpoints/${created.id}`, token });
    assert.ok(!read.body.includes('whsec_'));
  });
});

describe('authorization', () => {
  test('401 without a token, 403 without the webhooks:manage scope', async () => {
    const tenant = strict.tenant();
    const none = await strict.request({ method: 'GET', url: '/webhook-endpoints' });
    assert.equal(none.statusCode, 401);
    const token = await strict.token(tenant, { scope: 'ingestions:read ingestions:write catalog:read' });
    for (const [method, url] of [
      ['GET', '/webhook-endpoints'],
      ['POST', '/webhook-endpoints'],
    ] as const) {
      const res = await strict.request({
        method,
        url,
        token,
        json: method === 'POST' ? { url: 'https://h.example' } : undefined,
      });
      assert.equal(res.statusCode, 403, `${method} ${url}`);
    }
    const scoped = await strict.token(tenant, { scope: 'webhooks:manage' });
    assert.equal((await list(strict, scoped)).data.length, 0);
  });
});
