/**
 * `npm run docs:api`: writes docs/api.md from the service's OpenAPI document; with `--check`, only
 * says whether docs/api.md is up to date (exit 1 when not).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { apiReferencePage } from './api-reference-page.ts';

const target = path.join(import.meta.dirname, '..', 'docs', 'api.md');
const page = await apiReferencePage();
if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== page) {
    process.stderr.write('docs/api.md is out of date: run npm run docs:api\n');
    process.exitCode = 1;
  }
} else {
  await writeFile(target, page);
  process.stdout.write(`wrote ${path.relative(process.cwd(), target)}\n`);
}
