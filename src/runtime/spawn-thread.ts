import { Worker } from 'node:worker_threads';

/**
 * Starts a worker thread on `entry`, a module path relative to `base` written as its `.ts` source
 * (`new URL('./x.ts', import.meta.url)`): the compiled `.js` next to it when running compiled code,
 * else the source under tsx. Node 20 does not apply `--import tsx` from a worker's execArgv to the
 * worker's entry module, so a `.ts` entry is started from a two-line bootstrap that registers tsx's
 * loader first.
 */
export function spawnThread(entry: URL, workerData: unknown): Worker {
  if (!entry.pathname.endsWith('.ts') || !import.meta.url.endsWith('.ts')) {
    return new Worker(new URL(entry.href.replace(/\.ts$/, '.js')), { workerData });
  }
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}
