/** One log line per request: at info for what people do, at debug for probes, scrapes and polling. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildOperationsApp } from '../../src/app/build-app.ts';
import { loadConfig } from '../../src/config.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { FAVICON } from '../../src/http/favicon.ts';
import { testServiceForFile } from '../helpers/test-service.ts';

const svc = testServiceForFile();

interface Line {
  level: number;
  msg: string;
  req?: { method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
}

/** An operations app (the API's conventions, its health routes) whose log lines land in `lines`. */
async function loggedApp(level: string) {
  const lines: Line[] = [];
  const app = await buildOperationsApp({
    config: loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://ops.test' }),
    metrics: createMetrics({ defaults: false }),
    readiness: [{ name: 'database', probe: async () => true }],
    logger: { level, stream: { write: (line) => lines.push(JSON.parse(line) as Line) } },
  });
  return { app, lines };
}

void test('each request is logged once, when answered, with method, URL, status and time', async () => {
  const { app, lines } = await loggedApp('info');
  try {
    const res = await app.inject({
      method: 'POST',
      url: '/nowhere?x=1',
      headers: { 'x-request-id': 'log-1' },
    });
    assert.equal(res.statusCode, 404);
    assert.equal(lines.length, 1, JSON.stringify(lines));
    const [line] = lines;
    assert.equal(line!.level, 30);
    assert.equal(line!.msg, 'request completed');
    assert.equal(line!.req?.method, 'POST');
    assert.equal(line!.req?.url, '/nowhere?x=1');
    assert.equal(line!.res?.statusCode, 404);
    assert.equal(typeof line!.responseTime, 'number');
  } finally {
    await app.close();
  }
});

void test('probes, scrapes and requests marked X-Poll: 1 are logged at debug only', async () => {
  const info = await loggedApp('info');
  const debug = await loggedApp('debug');
  try {
    for (const { app } of [info, debug]) {
      for (const url of ['/healthz', '/readyz', '/metrics']) {
        assert.equal((await app.inject({ method: 'GET', url })).statusCode, 200);
      }
      const polled = await app.inject({ method: 'GET', url: '/polled', headers: { 'x-poll': '1' } });
      assert.equal(polled.statusCode, 404);
    }
    assert.deepEqual(info.lines, []);
    assert.deepEqual(
      debug.lines.map((line) => [line.level, line.msg, line.req?.url]),
      [
        [20, 'request completed', '/healthz'],
        [20, 'request completed', '/readyz'],
        [20, 'request completed', '/metrics'],
        [20, 'request completed', '/polled'],
      ],
    );
  } finally {
    await info.app.close();
    await debug.app.close();
  }
});

void test('GET /favicon.ico answers an icon, without a token', async () => {
  const res = await svc.request({ method: 'GET', url: '/favicon.ico' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['content-type'], 'image/x-icon');
  assert.equal(res.headers['cache-control'], 'public, max-age=86400');
  assert.deepEqual(res.rawPayload, FAVICON);
  // An ICO directory of one 32×32 image, which is a PNG.
  assert.deepEqual([...res.rawPayload.subarray(0, 8)], [0, 0, 1, 0, 1, 0, 32, 32]);
  assert.deepEqual([...res.rawPayload.subarray(22, 26)], [0x89, 0x50, 0x4e, 0x47]);
  const head = await svc.service.app!.inject({ method: 'HEAD', url: '/favicon.ico' });
  assert.equal(head.statusCode, 200);
});
