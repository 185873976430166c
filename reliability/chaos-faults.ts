import type { Cluster, Member } from './cluster.ts';
import type { Random } from './chaos-workload.ts';
import type { PrivatePostgres } from './private-postgres.ts';
import type { FailoverTimes, StandbyPair } from './standby-pair.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The kinds of fault the chaos run injects. */
export const FAULT_KINDS = [
  'kill-worker',
  'kill-api',
  'terminate-backends',
  'restart-postgres',
  'failover',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** A fault as it happened: from its start until everything it hit was back (ready again). */
export interface FaultWindow {
  kind: FaultKind;
  detail: string;
  start: number;
  end: number;
}

/**
 * After a fault has ended, requests may still fail for a while: an API reopens its kept
 * connections in the background (retrying every 0.1–5 s), a lost pooled connection is found dead
 * by the request that takes it. A 5xx up to this long after a fault's end still counts as its.
 */
export const FAULT_GRACE_MS = 15_000;

/** Planned moments (ms from the start) for each fault, in order; the counts are per kind. */
export function planFaults(
  random: Random,
  durationMs: number,
  counts: Record<FaultKind, number>,
): Array<{ at: number; kind: FaultKind }> {
  const plan: Array<{ at: number; kind: FaultKind }> = [];
  for (const kind of FAULT_KINDS) {
    for (let i = 0; i < counts[kind]; i++) {
      // Not in the first seconds (the workload is starting) nor the last (let the run settle).
      plan.push({ at: Math.round((0.1 + 0.75 * random.next()) * durationMs), kind });
    }
  }
  return plan.sort((a, b) => a.at - b.at);
}

/** Whether `request` (a start and an end) overlaps a fault window or its grace after. */
export function insideFault(
  request: { start: number; end: number },
  windows: readonly FaultWindow[],
): boolean {
  return windows.some((w) => request.end >= w.start && request.start <= w.end + FAULT_GRACE_MS);
}

/**
 * Runs the planned faults one after another at their moments from `startedAt`, recording a window
 * for each. A killed process comes back after a short, seeded pause, on its port.
 */
export async function runFaults(options: {
  plan: ReadonlyArray<{ at: number; kind: FaultKind }>;
  startedAt: number;
  random: Random;
  cluster: Cluster;
  /** A {@link StandbyPair} when the plan has a failover. */
  postgres: PrivatePostgres | StandbyPair;
  windows: FaultWindow[];
  say: (line: string) => void;
  /** Told what each failover took. */
  failovers?: FailoverTimes[];
  /** How long a failover first stalls the standby's WAL receiver (see `StandbyPair.failover`). */
  standbyStallMs?: number;
}): Promise<void> {
  const { cluster, postgres, random, windows, say } = options;
  const restartAfterKill = async (kind: FaultKind, member: Member) => {
    const start = Date.now();
    await cluster.kill(member);
    await sleep(random.int(200, 3000));
    await cluster.start(member);
    windows.push({ kind, detail: member.name, start, end: Date.now() });
  };
  for (const { at, kind } of options.plan) {
    const wait = options.startedAt + at - Date.now();
    if (wait > 0) await sleep(wait);
    const start = Date.now();
    switch (kind) {
      case 'kill-worker':
        await restartAfterKill(kind, random.pick(cluster.workers));
        break;
      case 'kill-api':
        await restartAfterKill(kind, random.pick(cluster.apis));
        break;
      case 'terminate-backends': {
        const ended = await postgres.terminateBackends();
        windows.push({ kind, detail: `${ended} backends`, start, end: Date.now() });
        break;
      }
      case 'restart-postgres':
        await postgres.restart();
        windows.push({ kind, detail: 'fast shutdown, then start', start, end: Date.now() });
        break;
      case 'failover': {
        if (!('failover' in postgres)) throw new Error('a failover needs a standby pair');
        const times = await postgres.failover(options.standbyStallMs ?? 0);
        options.failovers?.push(times);
        windows.push({
          kind,
          detail:
            `${postgres.synchronous ? 'synchronous' : 'asynchronous'} standby` +
            `${times.stallMs ? ` stalled ${times.stallMs} ms, then` : ''} promoted in ${times.promotedMs} ms, ` +
            `PgBouncer repointed at ${times.repointedMs} ms, replay lag before the stop ${times.replayLagBytes} bytes`,
          start,
          end: Date.now(),
        });
        break;
      }
    }
    const last = windows.at(-1)!;
    say(
      `  fault at ${((last.start - options.startedAt) / 1000).toFixed(1)} s: ${kind} (${last.detail}), ` +
        `${last.end - last.start} ms`,
    );
  }
}
