/**
 * Compiles src/ to plain JavaScript in dist/ (what `npm start` runs), copies the files the code
 * reads next to itself (the SQL migrations and the room classifier's weights), and bundles the
 * dashboard of ui/ with Vite into dist/ui (docs/ui.md).
 *
 *   npm run build
 *   npm run build -- --out-dir <dir>     elsewhere than dist/ (inside the repository, so that the
 *                                        compiled code finds node_modules)
 *
 * Running compiled code instead of transpiling on load under tsx saves about 80 MiB of RSS per
 * process (tsx's loader thread and its transformed sources; measured: 128 vs 210 MiB when ready).
 * Type checking is `npm run typecheck`'s job, so the build only emits (`noCheck`). A build whose
 * sources have not changed since the last one (same stamp) is skipped, so `npm start` only compiles
 * after a change.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';

const root = path.resolve(import.meta.dirname, '..');
const src = path.join(root, 'src');
const ui = path.join(root, 'ui');
const { values: args } = parseArgs({ options: { 'out-dir': { type: 'string', default: 'dist' } } });
const dist = path.resolve(root, args['out-dir']);
/** Written last into a finished build: the hash of everything the build was made from. */
const STAMP = '.source-stamp';

/** A hash of the sources (service and dashboard), the compiler settings, the locked dependencies and this script. */
async function sourceStamp(): Promise<string> {
  const hash = createHash('sha256');
  const sources: string[] = [];
  for (const dir of [src, ui]) {
    for (const file of await readdir(dir, { recursive: true })) {
      if ((await stat(path.join(dir, file))).isFile()) sources.push(path.join(dir, file));
    }
  }
  const files = sources
    .concat(
      ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/build.ts'].map((f) =>
        path.join(root, f),
      ),
    )
    .sort();
  for (const file of files)
    hash
      .update(`${path.relative(root, file)}\0`)
      .update(await readFile(file))
      .update('\0');
  return hash.digest('hex');
}

const stamp = await sourceStamp();
const built = await readFile(path.join(dist, STAMP), 'utf8').catch(() => null);
if (built !== stamp) {
  // Built beside the output and swapped in by renames, so that a service starting from the same
  // checkout meanwhile (several `npm start`s at once) never finds the output half-written or gone.
  const fresh = `${dist}.build-${process.pid}`;
  const old = `${dist}.old-${process.pid}`;
  await Promise.all([fresh, old].map((dir) => rm(dir, { recursive: true, force: true })));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', fresh], {
    stdio: 'inherit',
  });
  await cp(src, fresh, {
    recursive: true,
    filter: (from) => !from.endsWith('.ts'),
  });
  // Imported here, not at the top: a build whose stamp is current never loads the bundler.
  const vite = await import('vite');
  await vite.build({
    configFile: path.join(ui, 'vite.config.ts'),
    build: { outDir: path.join(fresh, 'ui'), emptyOutDir: true },
    logLevel: 'warn',
  });
  await writeFile(path.join(fresh, STAMP), stamp);
  // A clean output: a module deleted from src/ must not live on in the old build. Another build
  // may be swapping at the same moment: then the output is moved aside again and the swap retried.
  for (let attempt = 1; ; attempt++) {
    await rename(dist, old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    try {
      await rename(fresh, dist);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (attempt === 5 || (code !== 'ENOTEMPTY' && code !== 'EEXIST')) throw error;
      await rm(old, { recursive: true, force: true });
    }
  }
  await rm(old, { recursive: true, force: true });
}
