import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import { onInterrupt, SAME_REQUEST_MS } from '../../src/cli/interrupts.ts';

void describe('Ctrl-C handling', () => {
  void test('the first signal winds down, a second one later stops; the same signal forwarded at once counts once', () => {
    const emitter = new EventEmitter();
    let clock = 1000;
    const calls: string[] = [];
    const remove = onInterrupt(
      { first: () => calls.push(`first at ${clock}`), second: () => calls.push(`second at ${clock}`) },
      emitter,
      () => clock,
    );

    emitter.emit('SIGINT');
    clock += 5; // npm run forwarding the terminal's SIGINT to its script
    emitter.emit('SIGINT');
    clock += SAME_REQUEST_MS;
    emitter.emit('SIGTERM');
    remove();
    emitter.emit('SIGINT');

    assert.deepEqual(calls, ['first at 1000', `second at ${1005 + SAME_REQUEST_MS}`]);
    assert.equal(emitter.listenerCount('SIGINT') + emitter.listenerCount('SIGTERM'), 0);
  });

  void test('SIGTERM alone winds down like Ctrl-C', () => {
    const emitter = new EventEmitter();
    const calls: string[] = [];
    onInterrupt({ first: () => calls.push('first'), second: () => calls.push('second') }, emitter, () => 0);
    emitter.emit('SIGTERM');
    assert.deepEqual(calls, ['first']);
  });
});
