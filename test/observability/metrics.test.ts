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
