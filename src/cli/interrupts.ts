import type { EventEmitter } from 'node:events';

/** The signals that ask a command to stop: Ctrl-C, and `kill` or a service manager. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * A second signal sooner than this after the first is the same request delivered twice: `npm run`
 * forwards the SIGINT it gets to its script, which got it from the terminal already (when npm's
 * script shell execs the command, as bash does).
 */
export const SAME_REQUEST_MS = 250;

/**
 * Calls `first` on the first SIGINT or SIGTERM, so that the command can wind down, and `second` on
 * a later one, to stop at once. Returns a function that removes the handlers.
 */
export function onInterrupt(
  handlers: { first: () => void; second: () => void },
  emitter: Pick<EventEmitter, 'on' | 'off'> = process,
  now: () => number = () => performance.now(),
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
  return () => {
    for (const signal of STOP_SIGNALS) emitter.off(signal, handle);
  };
}
