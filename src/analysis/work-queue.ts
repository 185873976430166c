import { createFairShare } from './fair-share.ts';

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
 * running or waiting, and a freed slot goes to the owners with waiting tasks in turn
 * ({@link createFairShare}), so one tenant's backlog does not delay the others by more than about
 * a task each.
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
  const slots = createFairShare(maxRunning);
  const held = new Map<string, number>();

  const giveBack = (owner: string) => {
    const left = held.get(owner)! - 1;
    if (left === 0) held.delete(owner);
    else held.set(owner, left);
  };

  const run = async <T>(task: () => Promise<T>, owner: string): Promise<T> => {
    const release = await slots.acquire(owner, 1);
    try {
      return await task();
    } finally {
      release();
      giveBack(owner);
    }
  };

  return {
    runAll<T>(tasks: Array<() => Promise<T>>, owner = ''): Promise<T[]> {
      const holding = held.get(owner) ?? 0;
      if (holding + tasks.length > maxPerOwner) {
        const earlier = holding === 1 ? '1 earlier image' : `${holding} earlier images`;
        return Promise.reject(
          new QueueFullError(
            `The analyzer is still working on ${earlier} of this account; retry in a few seconds.`,
          ),
        );
      }
      const overflow = Math.max(0, tasks.length - (maxRunning - slots.used));
      if (slots.waiting + overflow > maxWaiting) {
        return Promise.reject(
          new QueueFullError('The analyzer is busy: too many images are waiting; retry in a few seconds.'),
        );
      }
      if (tasks.length === 0) return Promise.resolve([]);
      held.set(owner, holding + tasks.length);
      return Promise.all(tasks.map((task) => run(task, owner)));
    },
    get running() {
      return slots.used;
    },
    get waiting() {
      return slots.waiting;
    },
  };
}
