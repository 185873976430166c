import type { EventEmitter } from 'node:events';

/**
 * The signals that ask a command to stop: Ctrl-C, `kill` or a service manager, and a closed terminal
 * or a supervisor's hang-up (docs/cli.md, "Stopping a run").
 */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * A second signal sooner than this after the first is the same request delivered twice: `npm run`
 * forwards the SIGINT it gets to its script, which got it from the terminal already (the package
 * script execs the client, so npm's child is the client itself).
 */
export const SAME_REQUEST_MS = 250;

/** How often a command started by npm checks that npm is still its parent. */
export const PARENT_POLL_MS = 500;

/** Where the parent watch reads its facts from; the process itself unless a test says otherwise. */
export interface ParentWatch {
  /** The parent's pid when the command started. */
  parentAtStart: number;
  /** The parent's pid now. */
  parentPid: () => number;
  /** Whether to watch at all: the command was started by npm (`npm run`, `npx`). */
  startedByNpm: boolean;
}

/** Read when the command starts, so that npm gone before the handlers are set is noticed too. */
const PARENT_AT_START = process.ppid;

const processParent = (): ParentWatch => ({
  parentAtStart: PARENT_AT_START,
  parentPid: () => process.ppid,
  // npm sets it for every script and every `npx` command it runs.
  startedByNpm: process.env.npm_lifecycle_event !== undefined,
});

/**
 * Calls `first` on the first SIGINT, SIGTERM or SIGHUP, so that the command can wind down, and
 * `second` on a later one, to stop at once. Returns a function that removes the handlers.
 *
 * Started by npm, the command also winds down when npm goes away: npm forwards only SIGINT and
 * SIGTERM, and only to the shell of its script, so a SIGHUP or SIGKILL sent to npm (or a SIGTERM
 * when the shell does not exec the command, as under `npx`) ends npm and leaves this process running
 * under another parent, sending batches nobody waits for. That counts as a first signal, never as a
 * second one, since the signal that ended npm may have reached this process as well.
 */
export function onInterrupt(
  handlers: { first: () => void; second: () => void },
  emitter: Pick<EventEmitter, 'on' | 'off'> = process,
  now: () => number = () => performance.now(),
  parent: ParentWatch = processParent(),
): () => void {
  let firstAt: number | undefined;
  const handle = () => {
    if (firstAt === undefined) {
      firstAt = now();
      handlers.first();
    } else if (now() - firstAt >= SAME_REQUEST_MS) {
      handlers.second();
    }
  };
  for (const signal of STOP_SIGNALS) emitter.on(signal, handle);

  let watch: NodeJS.Timeout | undefined;
  if (parent.startedByNpm) {
    watch = setInterval(() => {
      if (parent.parentPid() === parent.parentAtStart) return;
      clearInterval(watch);
      if (firstAt === undefined) handle();
    }, PARENT_POLL_MS);
    // The watch alone must not keep a finished command alive.
    watch.unref();
  }
  return () => {
    clearInterval(watch);
    for (const signal of STOP_SIGNALS) emitter.off(signal, handle);
  };
}
