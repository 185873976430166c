import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * The machine's CPU time over a timed span, and whose it was, read from Linux's /proc: how busy the
 * machine was, how much of it a hypervisor took (`steal`), and how much CPU each party spent per
 * 1000 products. The pace of a run moves with the machine it lands on (docs/performance.md); the CPU
 * a side spends on the same batches moves much less, so these figures tell a slower machine from a
 * service that does more work.
 */

/** Who spent CPU time: the service process(es) measured, PostgreSQL, PgBouncer, the bench itself. */
export const CPU_OWNERS = ['service', 'postgres', 'pgbouncer', 'bench'] as const;
export type CpuOwner = (typeof CPU_OWNERS)[number];

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux). */
let clockTicks: number | undefined;
const ticksPerSecond = () =>
  (clockTicks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()));

/**
 * A `/proc/<pid>/stat` line's command name and CPU time so far (user + system, every thread), in
 * clock ticks. The name is in parentheses and may hold spaces and parentheses itself, so the fields
 * are read after its last `)`; utime and stime are the file's 14th and 15th fields (proc(5)).
 */
export function parseProcessStat(line: string): { name: string; ticks: number } {
  const close = line.lastIndexOf(')');
  const fields = line.slice(close + 2).split(' ');
  return { name: line.slice(line.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
}

/**
 * `/proc/stat`'s first line, the sum over every CPU, in clock ticks: busy (user, nice, system, irq,
 * softirq; guest time is inside user), idle (idle, iowait), and steal, the time a hypervisor ran
 * something else while this machine had work.
 */
export function parseMachineStat(text: string): { busy: number; idle: number; steal: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = text
    .slice(0, text.indexOf('\n'))
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number) as number[] & { length: 8 };
  return { busy: user! + nice! + system! + irq! + softirq!, idle: idle! + iowait!, steal: steal! };
}

/** The CPU time a running process has used so far, user and system (/proc/<pid>/stat), in seconds. */
export function readCpuSeconds(pid: number): number {
  return parseProcessStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).ticks / ticksPerSecond();
}

/** The machine's CPU time at one moment, and each owned process's, in clock ticks. */
export interface CpuReading {
  at: number;
  machine: { busy: number; idle: number; steal: number };
  processes: Map<number, { owner: CpuOwner; ticks: number }>;
}

/** Reads the machine's CPU time and that of every process with an owner. */
export function readCpu(servicePids: ReadonlySet<number>): CpuReading {
  const processes: CpuReading['processes'] = new Map();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // it ended after the listing
    }
    const pid = Number(entry);
    const { name, ticks } = parseProcessStat(stat);
    const owner: CpuOwner | null = servicePids.has(pid)
      ? 'service'
      : pid === process.pid
        ? 'bench'
        : name === 'postgres' || name === 'pgbouncer'
          ? name
          : null;
    if (owner) processes.set(pid, { owner, ticks });
  }
  return {
    at: performance.now(),
    machine: parseMachineStat(fs.readFileSync('/proc/stat', 'utf8')),
    processes,
  };
}

/**
 * Each owner's ticks between two readings: a process read at both counts what it used in between,
 * one that started after the first counts all it used. One that ended before the second (a pooled
 * connection closed when idle) cannot say what it used in between; that time is left in `other`.
 */
function ownedTicks(before: CpuReading, after: CpuReading): Record<CpuOwner, number> {
  const owned: Record<CpuOwner, number> = { service: 0, postgres: 0, pgbouncer: 0, bench: 0 };
  for (const [pid, { owner, ticks }] of after.processes) {
    const earlier = before.processes.get(pid);
    // A pid given to a new process since (another owner, fewer ticks) is a process that started.
    const since = earlier && earlier.owner === owner && earlier.ticks <= ticks ? earlier.ticks : 0;
    owned[owner] += ticks - since;
  }
  return owned;
}

/** What a timed span cost the machine. */
export interface CpuUse {
  /**
   * CPU milliseconds per 1000 products: each owner's, everything else on the machine (`other`),
   * and their sum (`total`, the machine's busy time).
   */
  msPer1000: Record<CpuOwner | 'other' | 'total', number>;
  /** Cores busy on average over the span, of `cores`. */
  busyCores: number;
  /** Cores' worth of time the hypervisor took over the span. */
  stealCores: number;
  cores: number;
}

/** Where the CPU went between two readings, for `products` products. */
export function cpuUseBetween(before: CpuReading, after: CpuReading, products: number): CpuUse {
  const hz = ticksPerSecond();
  const perProduct = (ticks: number) => ((ticks / hz) * 1000 * 1000) / products;
  const seconds = (after.at - before.at) / 1000;
  const busy = after.machine.busy - before.machine.busy;
  const owned = ownedTicks(before, after);
  const other = Math.max(0, busy - CPU_OWNERS.reduce((sum, owner) => sum + owned[owner], 0));
  const msPer1000 = { other: perProduct(other), total: perProduct(busy) } as CpuUse['msPer1000'];
  for (const owner of CPU_OWNERS) msPer1000[owner] = perProduct(owned[owner]);
  return {
    msPer1000,
    busyCores: busy / hz / seconds,
    stealCores: (after.machine.steal - before.machine.steal) / hz / seconds,
    cores: os.availableParallelism(),
  };
}

/**
 * Marks a timed span's start and end, where the meter reads the machine: the bench's timed code
 * calls it (bench/baseline.ts, bench/ingestion.ts) so that what it does before the clock starts
 * (preparing rows, serializing bodies) is not counted.
 */
export interface TimedSpan {
  start(): void;
  end(): void;
}

/** A span to hand to timed code, and the CPU it used once it ended. */
export interface CpuSpan extends TimedSpan {
  use(products: number): CpuUse;
}

/** A span metered against the given service processes (the bench reads /proc: it runs on Linux). */
export function cpuSpan(servicePids: readonly number[]): CpuSpan {
  const pids = new Set(servicePids);
  let before: CpuReading | null = null;
  let after: CpuReading | null = null;
  return {
    start: () => void (before = readCpu(pids)),
    end: () => void (after = readCpu(pids)),
    use(products) {
      if (!before || !after) throw new Error('the CPU span was not started and ended');
      return cpuUseBetween(before, after, products);
    },
  };
}
