/** The two pieces of a search that runs as the user types: a pause before asking, and only the newest answer shown. */

/** One request of a series, and whether its answer is still the one to show. */
export interface RequestTurn {
  /** Aborts this request when a newer one starts. */
  signal: AbortSignal;
  /** False once a newer request has started: its answer must not be drawn. */
  isLatest(): boolean;
}

/**
 * A series of requests where only the newest answer counts (a search as you type, a list that is
 * also polled): starting a request aborts the one before, and an answer that arrives late anyway
 * (already on its way, or from a service that ignores the abort) is recognised and dropped, so an
 * older query never overwrites a newer one.
 */
export function latestRequest(): { start(): RequestTurn } {
  let turn = 0;
  let controller: AbortController | null = null;
  return {
    start() {
      controller?.abort();
      const current = new AbortController();
      controller = current;
      const mine = ++turn;
      return { signal: current.signal, isLatest: () => mine === turn };
    },
  };
}

/** Whether `error` is the abort of a request a newer one replaced (nothing to show for it). */
export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

/**
 * Calls `run` once `delayMs` have passed without another `schedule` (the user paused typing); `now`
 * runs it at once, `cancel` forgets a pending run (the view is left).
 */
export function debounce(
  run: () => void,
  delayMs: number,
): { schedule(): void; now(): void; cancel(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    schedule() {
      clearTimeout(timer);
      timer = setTimeout(run, delayMs);
    },
    now() {
      clearTimeout(timer);
      run();
    },
    cancel() {
      clearTimeout(timer);
    },
  };
}
