import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JsonSyntaxError, JsonTooDeepError, outlineJson } from '../../src/http/json-outline.ts';

/** The submission's envelope check: `outlineJson` must accept exactly what `JSON.parse` accepts. */

const outline = (text: string, maxDepth = 64) => outlineJson(Buffer.from(text), { maxDepth });

/** What the outline of a parsed value should be, written from its definition. */
function expectedOutline(value: unknown): unknown {
  const standIn = (member: unknown) =>
    Array.isArray(member)
      ? member.map(() => null)
      : member === null
        ? null
        : typeof member === 'object'
          ? {}
          : typeof member === 'string'
            ? ''
            : typeof member === 'number'
              ? 0
              : member;
  if (Array.isArray(value)) return value.map(standIn);
  if (value === null || typeof value !== 'object') return standIn(value);
  const result: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    Object.defineProperty(result, key, {
      value: standIn(member),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return result;
}

function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** `JSON.parse`'s verdict on a text, in the terms of the scanner. */
function reference(text: string, maxDepth: number): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'syntax error';
  }
  return depthOf(value) > maxDepth ? 'too deep' : expectedOutline(value);
}

function scanned(text: string, maxDepth: number): unknown {
  try {
    return outline(text, maxDepth);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return 'syntax error';
    if (error instanceof JsonTooDeepError) return 'too deep';
    throw error;
  }
}

void describe('outlineJson', () => {
  void test('keeps the top-level value and its members’ types and array lengths', () => {
    assert.deepEqual(
      outline(
        '{"items":[1,{"a":[2]},"x"],"b":{"c":1},"d":"s","e":-1.5e3,"f":true,"g":false,"h":null,"i":[]}',
      ),
      { items: [null, null, null], b: {}, d: '', e: 0, f: true, g: false, h: null, i: [] },
    );
    assert.deepEqual(outline(' [1, [2, 3], {"a": 1}] '), [0, [null, null], {}]);
    assert.deepEqual(outline('"text"'), '');
    assert.deepEqual(outline('\t7\r\n'), 0);
    assert.deepEqual(outline('null'), null);
    assert.deepEqual(outline('{}'), {});
  });

  void test('reads keys as JSON.parse does: escapes decoded, the last duplicate wins, in first position', () => {
    assert.deepEqual(outline('{"it\\u0065ms":[1,2]}'), { items: [null, null] });
    assert.deepEqual(outline('{"items":[1],"items":"x"}'), { items: '' });
    const value = outline('{"a":1,"items":[1,2],"a":[3]}') as Record<string, unknown>;
    assert.deepEqual(Object.keys(value), ['a', 'items']);
    assert.deepEqual(value, { a: [null], items: [null, null] });
  });

  void test('a "__proto__" key is an own property, as with JSON.parse', () => {
    const value = outline('{"__proto__":[1],"items":[]}') as Record<string, unknown>;
    assert.deepEqual(Object.keys(value), ['__proto__', 'items']);
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(value, '__proto__')?.value, [null]);
  });

  void test('refuses nesting deeper than the limit, but only in text that is otherwise JSON', () => {
    assert.deepEqual(outline('[[[]]]', 3), [[null]]);
    assert.throws(() => outline('[[[[]]]]', 3), JsonTooDeepError);
    assert.throws(() => outline('{"a":{"b":{"c":{}}}}', 3), JsonTooDeepError);
    assert.throws(() => outline('[[[[', 3), JsonSyntaxError);
    assert.throws(() => outline('['.repeat(100_000) + ']'.repeat(100_000), 64), JsonTooDeepError);
  });

  void test('names the top-level member the too-deep nesting is in (null when the top is not an object)', () => {
    const memberOf = (text: string) => {
      try {
        outline(text, 3);
      } catch (error) {
        if (error instanceof JsonTooDeepError) return error.member;
      }
      return assert.fail(`${text} was not refused as too deep`);
    };
    assert.equal(memberOf('{"a":1,"b":{"c":{"d":{}}},"e":{"f":{"g":{}}}}'), 'b');
    assert.equal(memberOf('{"items":[[[1]]]}'), 'items');
    assert.equal(memberOf('[[[[]]]]'), null);
  });

  void test('counts long arrays only up to one past the limit, at the top level and in members', () => {
    const limited = (text: string) => outlineJson(Buffer.from(text), { maxDepth: 64, maxArrayLength: 3 });
    assert.deepEqual(limited('[1,2,3]'), [0, 0, 0]);
    assert.deepEqual(limited('[1,"a",{},[],null,6,7]'), [0, '', {}, []]);
    assert.deepEqual(limited('{"items":[1,2,3]}'), { items: [null, null, null] });
    assert.deepEqual(limited('{"items":[1,2,3,4,5,6,7],"b":[1]}'), {
      items: [null, null, null, null],
      b: [null],
    });
    // Still every byte is checked.
    assert.throws(() => limited('{"items":[1,2,3,4,5,6,7,]}'), JsonSyntaxError);
  });

  void test('finds a million open brackets unfinished, however deep they go', () => {
    assert.throws(() => outline('['.repeat(1_000_000)), JsonSyntaxError);
    assert.throws(() => outline('{"a":'.repeat(500_000)), JsonSyntaxError);
    assert.throws(() => outline(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`), JsonTooDeepError);
  });

  void test('refuses what JSON.parse refuses', () => {
    for (const text of [
      '',
      ' ',
      '{',
      '{"items":',
      '{"items":[1,]}',
      "{'items':[1]}",
      '{"items":[1]} x',
      '{"a" 1}',
      '{"a":1,}',
      '{,}',
      '[1 2]',
      '01',
      '-',
      '1.',
      '.5',
      '+1',
      '1e',
      '1e+',
      '0x1',
      'tru',
      'nul',
      'True',
      'NaN',
      'Infinity',
      '"\\x"',
      '"\\u12"',
      '"\\u12G4"',
      '"tab\there"',
      '"new\nline"',
      '"unterminated',
      '\ufeff{}',
      '{"a":1}}',
      '[1]]',
      '[}',
      '{]',
    ]) {
      assert.throws(() => JSON.parse(text), SyntaxError, `JSON.parse accepts ${JSON.stringify(text)}`);
      assert.throws(() => outline(text), JsonSyntaxError, `outline accepts ${JSON.stringify(text)}`);
    }
  });

  void test('agrees with JSON.parse on 50,000 generated and mutated texts', () => {
    let seed = 20261123;
    // mulberry32: a small seeded generator, so a failure reproduces.
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const generate = (depth: number): unknown => {
      const kind = Math.floor(random() * (depth > 4 ? 3 : 5));
      if (kind === 0) return pick([0, -1, 2.5, 1e21, -0.125, 1.5e300]);
      if (kind === 1) return pick(['', 'a', 'é', '"q"', '\\', '\u2028', 'x\ny', '\u0001', '😀', '__proto__']);
      if (kind === 2) return pick([true, false, null]);
      if (kind === 3) return Array.from({ length: Math.floor(random() * 4) }, () => generate(depth + 1));
      const object: Record<string, unknown> = {};
      for (let k = Math.floor(random() * 4); k > 0; k--)
        object[pick(['items', 'a', 'b', 'é'])] = generate(depth + 1);
      return object;
    };
    const fragments = [
      '{',
      '}',
      '[',
      ']',
      '"',
      ':',
      ',',
      ' ',
      '0',
      '-',
      '.',
      'e',
      '+',
      'n',
      '\\',
      'u',
      '\t',
      '\u0001',
      'é',
    ];
    const verdicts = new Set<string>();
    for (let n = 0; n < 50_000; n++) {
      let text = JSON.stringify(generate(0), null, random() < 0.5 ? 1 : undefined) ?? 'null';
      if (n % 2 === 1) {
        // Mutate: replace, insert or delete one character.
        const at = Math.floor(random() * (text.length + 1));
        const cut = random() < 0.5 ? 1 : 0;
        text = text.slice(0, at) + (random() < 0.8 ? pick(fragments) : '') + text.slice(at + cut);
      }
      const expected = reference(text, 3);
      verdicts.add(expected === 'syntax error' || expected === 'too deep' ? expected : 'ok');
      assert.deepEqual(scanned(text, 3), expected, JSON.stringify(text));
    }
    assert.deepEqual([...verdicts].sort(), ['ok', 'syntax error', 'too deep']);
  });
});
