import { after, before } from 'node:test';

/**
 * What a whole test file shares (its services, its browser), started before the file's first test
 * and stopped after its last; nothing is started when `skip` (the file's tests skip too). Answers
 * a getter for the started value, undefined until it has started.
 */
export function startedForFile<T>(
  start: () => Promise<T>,
  stop: (value: T) => Promise<void>,
  { skip = false }: { skip?: boolean } = {},
): () => T | undefined {
  let started: T | undefined;
  before(async () => {
    if (!skip) started = await start();
  });
  after(async () => {
    if (started !== undefined) await stop(started);
  });
  return () => started;
}

/**
 * `current()` as an object a file can name at its top and its tests use later: each member is read
 * from `current()` when used, and throws while there is nothing (`what` says what is missing).
 */
export function lateBound<T extends object>(current: () => T | undefined, what: string): T {
  return new Proxy({} as T, {
    get(_, member) {
      const value = current();
      if (value === undefined) throw new Error(`${what} is used before it started`);
      // Its methods are closures or bound to it: they need no `this` from the caller.
      return Reflect.get(value, member) as unknown;
    },
  });
}
