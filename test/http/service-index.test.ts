/** GET /: a browser is sent to the dashboard, any other client gets the links (docs/reference.md §12.2). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { testServiceForFile } from '../helpers/test-service.ts';

const svc = testServiceForFile();

const LINKS = { ui: '/ui', docs: '/docs', openapi: '/openapi.json' };

/** What browsers send for a page (Firefox, Chrome), and `text/html` named among others. */
const BROWSERS = [
  'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7',
  'application/json;q=0.5, TEXT/HTML;q=0.1',
];

/** Clients that do not name `text/html`: none, curl, a script, and a range that only reaches it. */
const OTHERS = [undefined, '*/*', 'application/json', 'text/*', 'text/html;q=0, application/json'];

const inject = (method: 'GET' | 'HEAD', accept: string | undefined, token?: string) =>
  svc.service.app!.inject({
    method,
    url: '/',
    headers: {
      ...(accept === undefined ? {} : { accept }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
  });

void test('a client whose Accept names text/html is redirected to /ui, GET and HEAD, without a token', async () => {
  for (const accept of BROWSERS) {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await inject(method, accept);
      assert.equal(res.statusCode, 302, `${method} ${accept}`);
      assert.equal(res.headers.location, '/ui');
      assert.equal(res.headers.vary, 'Accept');
      assert.equal(res.body, '');
      assert.ok(res.headers['x-request-id']);
    }
  }
});

void test('any other client gets the links as JSON, GET and HEAD, with or without a token', async () => {
  const token = await svc.token(svc.tenant('index'));
  for (const accept of OTHERS) {
    const res = await inject('GET', accept);
    assert.equal(res.statusCode, 200, String(accept));
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers.location, undefined);
    assert.deepEqual(res.json(), LINKS);
    const head = await inject('HEAD', accept);
    assert.equal(head.statusCode, 200, `HEAD ${String(accept)}`);
    assert.equal(head.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(head.body, '');
  }
  const withToken = await inject('GET', 'application/json', token);
  assert.equal(withToken.statusCode, 200);
  assert.deepEqual(withToken.json(), LINKS);
  // Even a bad token does not matter: the route needs none.
  assert.deepEqual((await inject('GET', undefined, 'not-a-token')).json(), LINKS);
});

void test('each link answers without a token, and another method on / is a 405', async () => {
  for (const url of ['/docs', '/openapi.json', '/ui']) {
    const res = await svc.request({ method: 'GET', url, token: null });
    // /ui is the dashboard when it is built (scripts/build.ts), else not-found like any unknown path.
    assert.ok([200, 302].includes(res.statusCode) || (url === '/ui' && res.statusCode === 404), url);
  }
  const post = await svc.request({ method: 'POST', url: '/', token: null, json: {} });
  assert.equal(post.statusCode, 405);
  assert.equal(post.headers.allow, 'GET, HEAD');
});
