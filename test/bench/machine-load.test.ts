import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuSpan, parseMachineStat, parseProcessStat } from '../../bench/machine-load.ts';

/** The bench's CPU meter (bench/machine-load.ts): /proc read as proc(5) lays it out, and a real span. */

test('a process stat line is read after the last parenthesis of its name', () => {
  // pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime …
  const line = '4242 (node (a) b) R 1 4242 4242 0 -1 4194304 9120 0 12 0 317 45 0 0 20 0 11 0 5000 1 2\n';
  assert.deepEqual(parseProcessStat(line), { name: 'node (a) b', ticks: 362 });
});

test('the machine line sums busy and idle time, and reads steal apart', () => {
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const text = 'cpu  100 20 30 400 50 6 7 8 9 0\ncpu0 50 10 15 200 25 3 3 4 4 0\nintr 1 2 3\n';
  assert.deepEqual(parseMachineStat(text), { busy: 100 + 20 + 30 + 6 + 7, idle: 450, steal: 8 });
});

test('a span counts the CPU a service process spent within it, and the machine that was busy', async () => {
  // A process that says it is ready and, told to go, spins until it has used 300 ms of CPU, says so, and then waits.
  const child = spawn(
    process.execPath,
    [
      '-e',
      `process.stdout.write('ready');
       process.stdin.once('data', () => {
         const used = () => { const { user, system } = process.cpuUsage(); return user + system; };
         const until = used() + 300_000;
         while (used() < until);
         process.stdout.write('done');
         setTimeout(() => {}, 60_000);
       });`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  try {
    // Node.js's own start is not the span's: it begins once the child listens for the word.
    await once(child.stdout, 'data');
    const span = cpuSpan([child.pid!]);
    span.start();
    child.stdin.write('go');
    await once(child.stdout, 'data');
    span.end();
    // For 1000 products, the figures per 1000 are the span's milliseconds.
    const use = span.use(1000);
    assert.ok(use.msPer1000.service >= 280, `service ${use.msPer1000.service} ms`);
    assert.ok(use.msPer1000.service <= 450, `service ${use.msPer1000.service} ms`);
    assert.ok(use.msPer1000.total >= use.msPer1000.service, JSON.stringify(use));
    // The machine's counters tick per core, 10 ms at a time: over a span this short, allow a tick.
    assert.ok(use.busyCores > 0 && use.busyCores <= os.availableParallelism() + 0.5, JSON.stringify(use));
    assert.equal(use.cores, os.availableParallelism());
  } finally {
    child.kill();
  }
});

test('a span used before it ended says so', () => {
  const span = cpuSpan([]);
  span.start();
  assert.throws(() => span.use(1000), /not started and ended/);
});
