import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { buildOperationsApp } from '../../src/http/app.ts';
import { createMetrics } from '../../src/observability/metrics.ts';

/** `/readyz` judges each dependency by its probe, and never waits on one longer than the timeout. */

// Without the timeout the probe that never answers would hold the request for ever: the test's own
// timeout turns that into a failure rather than a hung run.
void test(
  '/readyz: a probe that throws, answers false or never answers is failing; the others ok',
  { timeout: 30_000 },
  async () => {
    const app = await buildOperationsApp({
      config: loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://ops.test' }),
      metrics: createMetrics({ defaults: false }),
      readiness: [
        { name: 'database', probe: async () => true },
        { name: 'queue', probe: () => new Promise<boolean>(() => undefined) },
        { name: 'cache', probe: async () => false },
        {
          name: 'model',
          probe: async () => {
            throw new Error('not loaded');
          },
        },
      ],
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      assert.equal(res.statusCode, 503);
      assert.deepEqual(res.json(), {
        status: 'not_ready',
        checks: { database: 'ok', queue: 'failing', cache: 'failing', model: 'failing' },
      });
    } finally {
      await app.close();
    }
  },
);

void test('/readyz: every probe answering true is 200 ready', async () => {
  const app = await buildOperationsApp({
    config: loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://ops.test' }),
    metrics: createMetrics({ defaults: false }),
    readiness: [
      { name: 'database', probe: async () => true },
      { name: 'queue', probe: async () => true },
    ],
  });
  try {
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { status: 'ready', checks: { database: 'ok', queue: 'ok' } });
  } finally {
    await app.close();
  }
});

void test('probes and scrapes are not logged at info; a failing /readyz warns naming the check', async () => {
  const lines: Array<{ level: number; msg: string; failing?: string[] }> = [];
  let queueUp = true;
  const app = await buildOperationsApp({
    config: loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://ops.test' }),
    metrics: createMetrics({ defaults: false }),
    readiness: [
      { name: 'database', probe: async () => true },
      { name: 'queue', probe: async () => queueUp },
    ],
    logger: { level: 'info', stream: { write: (line) => lines.push(JSON.parse(line) as never) } },
  });
  try {
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      assert.equal((await app.inject({ method: 'GET', url })).statusCode, 200, url);
    }
    assert.deepEqual(lines, []);
    queueUp = false;
    assert.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    assert.deepEqual(
      lines.map(({ level, msg, failing }) => ({ level, msg, failing })),
      [{ level: 40, msg: 'not ready: queue failing', failing: ['queue'] }],
    );
    // Any other request is still logged at info.
    lines.length = 0;
    assert.equal((await app.inject({ method: 'GET', url: '/elsewhere' })).statusCode, 404);
    assert.deepEqual(
      lines.map(({ level, msg }) => [level, msg]),
      [
        [30, 'incoming request'],
        [30, 'request completed'],
      ],
    );
  } finally {
    await app.close();
  }
});
