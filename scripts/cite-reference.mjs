#!/usr/bin/env node
/**
 * Rewrites citations of the retired outside contract ("CONTRACT §5", "CONTRACT §5, §10.2",
 * "CONTRACT §5/§6", "CONTRACT §2 and §4", "CONTRACT.md §…", a "CONTRACT" that ends a comment line
 * whose next line starts with "§11.1") into citations of docs/reference.md, whose numbered sections
 * keep the same numbers (#56). Bare section marks such as "(§10.5)" that name a section of
 * docs/reference.md become "(docs/reference.md §10.5)" too, unless they follow an RFC, ECMA-376 or
 * another citation ("docs/reference.md §5, §7" keeps its "§7"), or follow one on the same or the
 * previous line.
 *
 *   node scripts/cite-reference.mjs [--check] [--no-bare] [DIR…]     (default DIRs: src ui test)
 *
 * It walks the folders as they are (files may have moved), so it can be run again on any tree, and it
 * is idempotent: a second run changes nothing. --check writes nothing and fails when a file would
 * change. Every cited section must be a heading of docs/reference.md. The exit status is 1 when any
 * "CONTRACT" is left (each is listed, for a person to reword) or a citation names no such section.
 * `npm run lint` runs it with --check, so a citation of a section that does not exist fails the lint.
 */
import console from 'node:console';
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const check = args.includes('--check');
const bare = !args.includes('--no-bare');
const dirs = args.filter((arg) => !arg.startsWith('--'));
if (dirs.length === 0) dirs.push('src', 'ui', 'test');

const TARGET = 'docs/reference.md';
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', 'coverage', 'test-results']);
const TEXT_EXT = /\.(?:[cm]?[jt]sx?|sql|css|html?|md|json|ya?ml|sh)$/;

/** The section numbers docs/reference.md has: `## 5. …` → 5, `### 10.1 …` → 10.1. */
const sections = new Set(
  [...fs.readFileSync(path.join(root, TARGET), 'utf8').matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map(
    (match) => match[1],
  ),
);

/** Whole phrases reworded by hand: "CONTRACT" used as a name rather than before a section mark. */
const PHRASES = [
  ['is written against CONTRACT alone', `is written against ${TARGET} alone`],
  ['the analysis shape of spec §Errors', `the analysis shape of ${TARGET} §8`],
  ['spec §Errors', `${TARGET} §2`],
  ['spec §States', `${TARGET} §5`],
];

// "CONTRACT" or "CONTRACT.md" before a section mark, on the same line or, when a comment wrapped
// there, at the start of the next one (after `*`, `//`, `--` or `#`).
const CITED = /\bCONTRACT(?:\.md)?(?=(?:[ \t]*\r?\n[ \t]*(?:\*|\/\/|--|#)?)?[ \t]*§)/g;
// A bare section mark: not inside a longer number, not after RFC/ECMA/Part/spec/another citation
// ("§5, §7", "§5/§6", "§4–§9", "§2 and §4", "docs/reference.md §5", also across a wrapped comment
// line), and naming a section the reference has.
const BARE =
  /(?<![\w.§/–-])(?<!(?:RFC \d+|ECMA-376|Part \d+,?|spec|reference\.md|§\d+(?:\.\d+)?(?:,|\/|–| and| or| to)?)(?:[ \t]*\r?\n[ \t]*(?:\*|\/\/|--|#)?)?[ \t]*)§(\d+(?:\.\d+)*)(?![\d.]*\d)/g;

function* walk(dir) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) yield* walk(full);
    } else if (entry.isFile() && TEXT_EXT.test(entry.name)) yield full;
  }
}

const counts = { cited: 0, phrases: 0, bare: 0, files: 0 };
const leftovers = [];
const unknownSections = [];

for (const dir of dirs) {
  for (const file of walk(path.resolve(root, dir))) {
    const before = fs.readFileSync(file, 'utf8');
    let text = before;
    for (const [from, to] of PHRASES) {
      const parts = text.split(from);
      counts.phrases += parts.length - 1;
      text = parts.join(to);
    }
    text = text.replace(CITED, () => {
      counts.cited += 1;
      return TARGET;
    });
    if (bare) {
      text = text.replace(BARE, (match, number, offset) => {
        if (!sections.has(number)) return match;
        // A mark on the line of a citation of the reference, or just after one, reads as its section.
        const lineStart = text.lastIndexOf('\n', offset - 1);
        const context = text.slice(Math.max(0, text.lastIndexOf('\n', lineStart - 1)), offset);
        if (context.includes(TARGET)) return match;
        counts.bare += 1;
        return `${TARGET} §${number}`;
      });
    }
    const rel = path.relative(root, file);
    text.split('\n').forEach((line, index) => {
      if (/CONTRACT/.test(line)) leftovers.push(`${rel}:${index + 1}: ${line.trim()}`);
      // Every section named after a citation of the reference (and the chain after it) must exist.
      for (const cite of line.matchAll(/reference\.md((?:(?:,|\/| and| or)? ?§\d+(?:\.\d+)*)+)/g)) {
        for (const [, number] of cite[1].matchAll(/§(\d+(?:\.\d+)*)/g)) {
          if (!sections.has(number)) unknownSections.push(`${rel}:${index + 1}: §${number}`);
        }
      }
    });
    if (text !== before) {
      counts.files += 1;
      if (check) console.log(`would change ${rel}`);
      else fs.writeFileSync(file, text);
    }
  }
}

console.log(
  `${check ? 'would rewrite' : 'rewrote'}: ${counts.cited} CONTRACT citations, ${counts.phrases} phrases, ` +
    `${counts.bare} bare section marks, in ${counts.files} files`,
);
if (unknownSections.length > 0) {
  console.error(`citations of sections ${TARGET} does not have:\n  ${unknownSections.join('\n  ')}`);
}
if (leftovers.length > 0) {
  console.error(`"CONTRACT" still written (reword these by hand):\n  ${leftovers.join('\n  ')}`);
}
process.exit(leftovers.length > 0 || unknownSections.length > 0 || (check && counts.files > 0) ? 1 : 0);
