/** An in-process exclusive lock per key, with a bounded wait. */
export interface KeyedMutex {
  /**
   * Runs `fn` once no other holder of `key` in this process is running; resolves `null` without
   * running it when that takes longer than `waitMs`. `fn` itself may also answer `null`.
   */
  tryRun<T>(key: string, waitMs: number, fn: () => Promise<T | null>): Promise<T | null>;
}

/** Creates a {@link KeyedMutex}. Waiters are served in arrival order. */
export function createKeyedMutex(): KeyedMutex {
  const tails = new Map<string, Promise<void>>();

  return {
    async tryRun(key, waitMs, fn) {
      const previous = tails.get(key) ?? Promise.resolve();
      let release!: () => void;
      const mine = new Promise<void>((resolve) => (release = resolve));
      const tail = previous.then(() => mine);
      tails.set(key, tail);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), waitMs);
      });
      // The entry is dropped only once this waiter's turn has really passed (its tail settled),
      // never when it merely gave up waiting: the holder ahead of it may still be running.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      try {
        const won = await Promise.race([previous.then(() => 'acquired' as const), timedOut]);
        if (won === 'timeout') return null;
        return await fn();
      } finally {
        clearTimeout(timer);
        release();
      }
    },
  };
}
