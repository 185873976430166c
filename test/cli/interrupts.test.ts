import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, test } from 'node:test';
import { onInterrupt, PARENT_POLL_MS, SAME_REQUEST_MS, type ParentWatch } from '../../src/cli/interrupts.ts';

/** A command not started by npm: no parent watch. */
const NOT_BY_NPM: ParentWatch = { parentAtStart: 10, parentPid: () => 10, startedByNpm: false };

void describe('Ctrl-C handling', () => {
  void test('the first signal winds down, a second one later stops; the same signal forwarded at once counts once', () => {
    const emitter = new EventEmitter();
    let clock = 1000;
    const calls: string[] = [];
    const remove = onInterrupt(
      { first: () => calls.push(`first at ${clock}`), second: () => calls.push(`second at ${clock}`) },
      emitter,
      () => clock,
      NOT_BY_NPM,
    );

    emitter.emit('SIGINT');
    clock += 5; // npm run forwarding the terminal's SIGINT to its script
    emitter.emit('SIGINT');
    clock += SAME_REQUEST_MS;
    emitter.emit('SIGTERM');
    remove();
    emitter.emit('SIGINT');

    assert.deepEqual(calls, ['first at 1000', `second at ${1005 + SAME_REQUEST_MS}`]);
    assert.equal(
      emitter.listenerCount('SIGINT') + emitter.listenerCount('SIGTERM') + emitter.listenerCount('SIGHUP'),
      0,
    );
  });

  for (const signal of ['SIGTERM', 'SIGHUP']) {
    void test(`${signal} alone winds down like Ctrl-C`, () => {
      const emitter = new EventEmitter();
      const calls: string[] = [];
      onInterrupt(
        { first: () => calls.push('first'), second: () => calls.push('second') },
        emitter,
        () => 0,
        NOT_BY_NPM,
      );
      emitter.emit(signal);
      assert.deepEqual(calls, ['first']);
    });
  }
});

/** Real timers: node:test's mock timers print an ExperimentalWarning on Node 20. */
const polls = (n: number) => new Promise((resolve) => setTimeout(resolve, n * PARENT_POLL_MS + 100));

void describe('npm going away', () => {
  void test('started by npm, a new parent winds down once, as a first signal, and never as a second', async () => {
    const emitter = new EventEmitter();
    let parent = 4242;
    const calls: string[] = [];
    const remove = onInterrupt(
      { first: () => calls.push('first'), second: () => calls.push('second') },
      emitter,
      () => 0,
      { parentAtStart: 4242, parentPid: () => parent, startedByNpm: true },
    );

    await polls(2);
    assert.deepEqual(calls, []);
    parent = 1; // npm ended; this process was re-parented
    await polls(1);
    assert.deepEqual(calls, ['first']);
    await polls(2);
    assert.deepEqual(calls, ['first']);
    remove();
  });

  void test('a signal first, then npm gone: still one first, no second', async () => {
    const emitter = new EventEmitter();
    let parent = 4242;
    let clock = 0;
    const calls: string[] = [];
    const remove = onInterrupt(
      { first: () => calls.push('first'), second: () => calls.push('second') },
      emitter,
      () => clock,
      { parentAtStart: 4242, parentPid: () => parent, startedByNpm: true },
    );
    emitter.emit('SIGHUP'); // a closed terminal hangs up npm and this process alike
    parent = 1;
    clock += 10 * SAME_REQUEST_MS;
    await polls(1);
    assert.deepEqual(calls, ['first']);
    remove();
  });

  void test('not started by npm, a new parent is no reason to stop', async () => {
    const calls: string[] = [];
    const remove = onInterrupt(
      { first: () => calls.push('first'), second: () => calls.push('second') },
      new EventEmitter(),
      () => 0,
      { parentAtStart: 4242, parentPid: () => 1, startedByNpm: false },
    );
    await polls(2);
    assert.deepEqual(calls, []);
    remove();
  });
});
