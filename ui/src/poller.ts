/** How often a view re-reads what is still moving. */
export interface PollTiming {
  firstMs: number;
  /** The longest delay while something shown is still running (queued behind other batches). */
  runningMaxMs: number;
  maxMs: number;
  factor: number;
}

/**
 * 0.5 s while things change, backing off ×1.6 up to 2 s while something shown is still running but
 * has not moved, and up to 8 s while everything shown is finished (only new batches can appear).
 */
export const LIVE_POLLING: PollTiming = { firstMs: 500, runningMaxMs: 2000, maxMs: 8000, factor: 1.6 };

/** What a poll found: a change, nothing new while something runs, nothing new at all, or the end. */
export type PollOutcome = 'changed' | 'running' | 'same' | 'done';

/** Ticks now running: their requests are the polling's (see `isPolling`). */
let ticksRunning = 0;

/**
 * Whether a poll's tick is running, so that the requests made now are polling (api.ts marks them
 * for the service, which logs them at debug). A click answered while a tick waits is marked too:
 * only its log line's level is affected.
 */
export function isPolling(): boolean {
  return ticksRunning > 0;
}

/**
 * Calls `tick` repeatedly until it returns 'done' or the returned stop function is called. The delay
 * starts at `firstMs`, grows by `factor` (up to `runningMaxMs` or `maxMs`) each time `tick` reports
 * 'running' or 'same', and falls
 * back to `firstMs` when it reports 'changed' — so a busy batch is followed closely and an idle one
 * costs a request every few seconds. A hidden tab is not polled; it catches up when shown. A tick
 * that throws counts as 'same' (the view shows its own error) so a failing service is backed off.
 */
export function poll(tick: () => Promise<PollOutcome>, timing: PollTiming = LIVE_POLLING): () => void {
  let delay = timing.firstMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const resume = () => void run();
  const run = async () => {
    if (stopped) return;
    if (document.hidden) {
      document.addEventListener('visibilitychange', resume, { once: true });
      return;
    }
    ticksRunning++;
    const outcome = await tick()
      .catch(() => 'same' as const)
      .finally(() => ticksRunning--);
    if (stopped || outcome === 'done') return;
    const ceiling = outcome === 'running' ? timing.runningMaxMs : timing.maxMs;
    delay = outcome === 'changed' ? timing.firstMs : Math.min(ceiling, delay * timing.factor);
    timer = setTimeout(() => void run(), delay);
  };
  timer = setTimeout(() => void run(), delay);
  return () => {
    stopped = true;
    clearTimeout(timer);
    document.removeEventListener('visibilitychange', resume);
  };
}
