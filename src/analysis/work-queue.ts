/** The analyzer cannot take these images now; the caller should retry later. */
export class QueueFullError extends Error {}

/** Runs tasks with a bound on how many run at once, how many may wait, and how many one owner holds. */
export interface WorkQueue {
  /**
   * Admits all `tasks` of `owner` or none (throws {@link QueueFullError} when they would overflow a
   * bound), so a request is never half-run; resolves with every task's result in order.
   */
  runAll<T>(tasks: Array<() => Promise<T>>, owner?: string): Promise<T[]>;
  readonly running: number;
  readonly waiting: number;
}

/**
 * Creates a bounded work queue. `maxRunning` caps the memory held by images being fetched and decoded
 * at once; `maxWaiting` caps the backlog, so a burst is refused with a clear error instead of growing
 * without limit. Owners (tenants) share it fairly: one owner holds at most `maxPerOwner` tasks,
 * running or waiting, and a freed slot goes to the owners in turn, so one tenant's backlog neither
 * fills the queue nor delays the others by more than a task each.
 */
export function createWorkQueue({
  maxRunning,
  maxWaiting,
  maxPerOwner = Infinity,
}: {
  maxRunning: number;
  maxWaiting: number;
  maxPerOwner?: number;
}): WorkQueue {
  let running = 0;
  let waitingCount = 0;
  // Waiting tasks by owner; the map's order is the turn order (an owner served goes to the back).
  const waiting = new Map<string, Array<() => void>>();
  const held = new Map<string, number>();

  const takeNext = (): (() => void) | undefined => {
    for (const [owner, starts] of waiting) {
      const start = starts.shift()!;
      waiting.delete(owner);
      if (starts.length > 0) waiting.set(owner, starts);
      waitingCount -= 1;
      return start;
    }
    return undefined;
  };

  const release = (owner: string) => {
    const left = held.get(owner)! - 1;
    if (left === 0) held.delete(owner);
    else held.set(owner, left);
    running -= 1;
    const next = takeNext();
    if (next) {
      running += 1;
      next();
    }
  };

  const run = <T>(task: () => Promise<T>, owner: string): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const start = () => {
        // A task that throws synchronously still releases its slot.
        Promise.resolve()
          .then(task)
          .then(resolve, reject)
          .finally(() => release(owner));
      };
      if (running < maxRunning) {
        running += 1;
        start();
      } else {
        const starts = waiting.get(owner);
        if (starts) starts.push(start);
        else waiting.set(owner, [start]);
        waitingCount += 1;
      }
    });

  return {
    runAll<T>(tasks: Array<() => Promise<T>>, owner = ''): Promise<T[]> {
      const holding = held.get(owner) ?? 0;
      if (holding + tasks.length > maxPerOwner) {
        return Promise.reject(
          new QueueFullError(
            `The analyzer is still working on ${holding} earlier images of this account; retry in a few seconds.`,
          ),
        );
      }
      const overflow = Math.max(0, tasks.length - (maxRunning - running));
      if (waitingCount + overflow > maxWaiting) {
        return Promise.reject(
          new QueueFullError('The analyzer is busy: too many images are waiting; retry in a few seconds.'),
        );
      }
      held.set(owner, holding + tasks.length);
      return Promise.all(tasks.map((task) => run(task, owner)));
    },
    get running() {
      return running;
    },
    get waiting() {
      return waitingCount;
    },
  };
}
