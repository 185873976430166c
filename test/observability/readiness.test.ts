import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.ts';
import { buildOperationsApp } from '../../src/app/build-app.ts';
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

/** An operations app whose log lines land in the returned array. */
async function loggedApp(level: string, readiness: Parameters<typeof buildOperationsApp>[0]['readiness']) {
  const lines: Array<{ level: number; msg: string; failing?: Record<string, string> }> = [];
  const app = await buildOperationsApp({
    config: loadConfig({ NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://ops.test' }),
    metrics: createMetrics({ defaults: false }),
    readiness,
    logger: { level, stream: { write: (line) => lines.push(JSON.parse(line) as never) } },
  });
  return { app, lines };
}

void test('at info, probes are not logged; readiness is logged when it changes, with why', async () => {
  let queueUp = true;
  const { app, lines } = await loggedApp('info', [
    { name: 'database', probe: async () => true },
    { name: 'queue', probe: async () => queueUp },
    {
      name: 'model',
      probe: async () => {
        if (!queueUp) throw new Error('not loaded');
        return true;
      },
    },
  ]);
  const get = async (url: string) => (await app.inject({ method: 'GET', url })).statusCode;
  try {
    assert.deepEqual([await get('/healthz'), await get('/readyz'), await get('/metrics')], [200, 200, 200]);
    assert.deepEqual(lines, []);
    queueUp = false;
    assert.deepEqual([await get('/readyz'), await get('/readyz')], [503, 503]);
    queueUp = true;
    assert.equal(await get('/readyz'), 200);
    // Ready once before failing, so the failure is a warning (a start is not: see below).
    assert.deepEqual(
      lines.map(({ level, msg, failing }) => ({ level, msg, failing })),
      [
        {
          level: 40,
          msg: 'not ready: queue, model failing',
          failing: { queue: 'answered not ready', model: 'not loaded' },
        },
        { level: 30, msg: 'ready again', failing: undefined },
      ],
    );
    // Any other request is logged at info, in one line.
    lines.length = 0;
    assert.equal(await get('/elsewhere'), 404);
    assert.deepEqual(
      lines.map(({ level, msg }) => [level, msg]),
      [[30, 'request completed']],
    );
  } finally {
    await app.close();
  }
});

void test('while starting, not being ready yet is info, and the first ready answer says ready', async () => {
  let loaded = false;
  const { app, lines } = await loggedApp('info', [
    { name: 'database', probe: async () => true },
    { name: 'analyzer', probe: async () => loaded },
  ]);
  const get = async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode;
  try {
    assert.deepEqual([await get(), await get()], [503, 503]);
    loaded = true;
    assert.equal(await get(), 200);
    assert.deepEqual(
      lines.map(({ level, msg, failing }) => ({ level, msg, failing })),
      [
        { level: 30, msg: 'not ready yet: analyzer starting', failing: { analyzer: 'answered not ready' } },
        { level: 30, msg: 'ready', failing: undefined },
      ],
    );
  } finally {
    await app.close();
  }
});

void test('LOG_LEVEL other than info is kept: debug shows probes, error shows no readiness warning', async () => {
  const debug = await loggedApp('debug', [{ name: 'database', probe: async () => true }]);
  const quiet = await loggedApp('error', [{ name: 'database', probe: async () => false }]);
  try {
    assert.equal((await debug.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.deepEqual(
      debug.lines.map(({ level, msg }) => [level, msg]),
      [[20, 'request completed']],
    );
    assert.equal((await quiet.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503);
    assert.deepEqual(quiet.lines, []);
  } finally {
    await debug.app.close();
    await quiet.app.close();
  }
});
