import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createMetrics } from '../../src/observability/metrics.ts';

void test('/metrics shows the database pool as read at the scrape', async () => {
  const metrics = createMetrics({ defaults: false });
  let pool: { open: number; idle: number; waiting: number } | undefined;
  metrics.observePool('api', () => pool);

  // The embedded database has no pool: the series are declared but have no samples.
  assert.doesNotMatch(await metrics.render(), /^db_pool_connections\{/m);

  pool = { open: 12, idle: 9, waiting: 0 };
  let text = await metrics.render();
  assert.match(text, /^db_pool_connections\{role="api",state="idle"\} 9$/m);
  assert.match(text, /^db_pool_connections\{role="api",state="busy"\} 3$/m);
  assert.match(text, /^db_pool_waiting_queries\{role="api"\} 0$/m);

  pool = { open: 12, idle: 0, waiting: 7 };
  text = await metrics.render();
  assert.match(text, /^db_pool_connections\{role="api",state="idle"\} 0$/m);
  assert.match(text, /^db_pool_connections\{role="api",state="busy"\} 12$/m);
  assert.match(text, /^db_pool_waiting_queries\{role="api"\} 7$/m);
});

void test('/metrics shows the reader pool beside the main one, and nothing of it where there is none', async () => {
  const metrics = createMetrics({ defaults: false });
  const pool = { open: 4, idle: 3, waiting: 0 };
  let reader: { open: number; idle: number; waiting: number } | undefined;
  metrics.observePool(
    'worker',
    () => pool,
    () => reader,
  );

  // The embedded database and an API have no reader pool: no samples.
  assert.doesNotMatch(await metrics.render(), /^db_reader_pool_connections\{/m);

  reader = { open: 2, idle: 0, waiting: 1 };
  let text = await metrics.render();
  assert.match(text, /^db_reader_pool_connections\{role="worker",state="idle"\} 0$/m);
  assert.match(text, /^db_reader_pool_connections\{role="worker",state="busy"\} 2$/m);
  assert.match(text, /^db_reader_pool_waiting_queries\{role="worker"\} 1$/m);
  assert.match(text, /^db_pool_connections\{role="worker",state="busy"\} 1$/m);

  reader = { open: 2, idle: 2, waiting: 0 };
  text = await metrics.render();
  assert.match(text, /^db_reader_pool_connections\{role="worker",state="idle"\} 2$/m);
  assert.match(text, /^db_reader_pool_waiting_queries\{role="worker"\} 0$/m);
});
