import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.ts';

/** The webhook settings are read and checked at start, like every other (docs/reference.md §1, §10.1). */

void describe('WEBHOOK_RETRY_SCHEDULE', () => {
  void test('defaults to the contract’s schedule; a list of seconds, fractions allowed', () => {
    assert.deepEqual(loadConfig({}).webhooks.retrySchedule, [5, 300, 1800, 7200, 18000, 36000, 36000]);
    assert.deepEqual(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1' }).webhooks.retrySchedule, [1]);
    assert.deepEqual(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0.2, 0.25,10' }).webhooks.retrySchedule,
      [0.2, 0.25, 10],
    );
    assert.deepEqual(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: '' }).webhooks.retrySchedule,
      [5, 300, 1800, 7200, 18000, 36000, 36000],
    );
  });

  void test('anything else refuses to start, naming the rule', () => {
    for (const value of ['soon', '5,,10', '-1', '1e3', '0.0001', '604801', '5;10', ',']) {
      assert.throws(
        () => loadConfig({ WEBHOOK_RETRY_SCHEDULE: value }),
        (error) =>
          error instanceof ConfigError &&
          error.message ===
            'WEBHOOK_RETRY_SCHEDULE must be up to 100 comma-separated delays in seconds, each from 0 to 604800 (e.g. 5,300,1800)',
        value,
      );
    }
  });
});

void describe('WEBHOOK_ALLOW_PRIVATE_HOSTS', () => {
  void test('false by default; true or false only', () => {
    assert.equal(loadConfig({}).webhooks.allowPrivateHosts, false);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true' }).webhooks.allowPrivateHosts, true);
    assert.equal(loadConfig({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'false' }).webhooks.allowPrivateHosts, false);
    assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'yes' }), {
      message: 'WEBHOOK_ALLOW_PRIVATE_HOSTS must be true or false',
    });
  });
});
