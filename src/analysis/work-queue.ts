/** The analyzer has more images waiting than its bound allows; the caller should retry later. */
export class QueueFullError extends Error {
  constructor(readonly waiting: number) {
    super('The analyzer is busy: too many images are waiting; retry in a few seconds.');
  }
}

/** Runs tasks with a bound on how many run at once and how many may wait. */
export interface WorkQueue {
  /**
   * Admits all `tasks` or none (throws {@link QueueFullError} when they would overflow the bound), so a
   * request is never half-run; resolves with every task's result in order.
   */
  runAll<T>(tasks: Array<() => Promise<T>>): Promise<T[]>;
  readonly running: number;
  readonly waiting: number;
}

/**
 * Creates a bounded work queue. `maxRunning` caps the memory held by images being fetched and decoded
 * at once; `maxWaiting` caps the backlog, so a burst is refused with a clear error instead of growing
 * without limit.
 */
export function createWorkQueue({
  maxRunning,
  maxWaiting,
}: {
  maxRunning: number;
  maxWaiting: number;
}): WorkQueue {
  let running = 0;
  const waiting: Array<() => void> = [];

  const release = () => {
    running -= 1;
    const next = waiting.shift();
    if (next) {
      running += 1;
      next();
    }
  };

  const run = <T>(task: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const start = () => {
        // A task that throws synchronously still releases its slot.
        Promise.resolve().then(task).then(resolve, reject).finally(release);
      };
      if (running < maxRunning) {
        running += 1;
        start();
      } else {
        waiting.push(start);
      }
    });

  return {
    runAll<T>(tasks: Array<() => Promise<T>>): Promise<T[]> {
      const free = maxRunning - running;
      const overflow = Math.max(0, tasks.length - free);
      if (waiting.length + overflow > maxWaiting) return Promise.reject(new QueueFullError(waiting.length));
      return Promise.all(tasks.map((task) => run(task)));
    },
    get running() {
      return running;
    },
    get waiting() {
      return waiting.length;
    },
  };
}
