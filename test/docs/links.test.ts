/**
 * The README and docs/ stand alone: every relative link resolves to a file of this repository (a
 * user's clone has nothing beside it), and a link to a heading finds that heading.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { anchorOf } from '../../scripts/api-reference.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');

/** README.md and every Markdown file under docs/. */
function pages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const full = path.join(dir, name);
      if (statSync(full).isDirectory()) return walk(full);
      return name.endsWith('.md') ? [full] : [];
    });
  return [path.join(ROOT, 'README.md'), ...walk(path.join(ROOT, 'docs'))];
}

/** The text outside fenced code blocks. */
const unfenced = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, '');

/** The text outside fenced code blocks and code spans, where links are links. */
const prose = (markdown: string) => unfenced(markdown).replace(/`[^`\n]*`/g, '');

/** The targets of `[text](target)` links and `[label]: target` definitions. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
  const defined = [...text.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!);
  return [...inline, ...defined];
}

/** The anchors of a Markdown file's headings, as GitHub makes them (repeats get `-1`, `-2`, …). */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of unfenced(readFileSync(file, 'utf8')).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const anchor = anchorOf(heading!.replace(/[*`]/g, ''));
    const count = seen.get(anchor) ?? 0;
    anchors.add(count === 0 ? anchor : `${anchor}-${count}`);
    seen.set(anchor, count + 1);
  }
  return anchors;
}

void test('every relative link of README.md and docs/ resolves inside the repository', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages()) {
    for (const target of linkTargets(readFileSync(page, 'utf8'))) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      checked++;
      const [file = '', fragment] = target.split('#');
      const resolved = file === '' ? page : path.resolve(path.dirname(page), decodeURIComponent(file));
      const where = `${path.relative(ROOT, page)}: ${target}`;
      if (path.relative(ROOT, resolved).startsWith('..')) broken.push(`${where} (outside the repository)`);
      else if (!existsSync(resolved)) broken.push(`${where} (no such file)`);
      else if (fragment && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment))
        broken.push(`${where} (no such heading)`);
    }
  }
  assert.ok(checked > 50, `the pages' links were found (${checked})`);
  assert.deepEqual(broken, []);
});

void test('the link check finds a link outside the repository, a missing file and a missing heading', () => {
  const targets = linkTargets(
    'See [spec](../shared/spec.md), [x](docs/nope.md "t") and `[not](a-link.md)`.\n[ref]: docs/api.md#nowhere\n',
  );
  assert.deepEqual(targets, ['../shared/spec.md', 'docs/nope.md', 'docs/api.md#nowhere']);
  assert.ok(anchorsOf(path.join(ROOT, 'docs', 'api.md')).has('post-productsingestions'));
  assert.ok(!anchorsOf(path.join(ROOT, 'docs', 'api.md')).has('nowhere'));
});
