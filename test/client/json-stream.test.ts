import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { JsonArraySplitter, JsonStreamError } from '../../src/import-pipeline/json-splitter.ts';
import { formatOf, readJsonArray, readJsonLines } from '../../src/client/json-stream.ts';

/** Splits `input` fed in chunks of `size` code units; returns the element texts and their lines. */
function splitInChunks(input: string, size: number): Array<[string, number]> {
  const splitter = new JsonArraySplitter();
  const out: Array<[string, number]> = [];
  for (let i = 0; i < input.length; i += size) {
    for (const { text, line } of splitter.push(input.slice(i, i + size))) out.push([text, line]);
  }
  splitter.end();
  return out;
}

/** The element texts of `input`, checked to be the same whatever the chunk boundaries. */
function split(input: string): string[] {
  const whole = splitInChunks(input, Math.max(1, input.length));
  for (const size of [1, 2, 3, 5, 7, 64])
    assert.deepEqual(splitInChunks(input, size), whole, `chunks of ${size}`);
  return whole.map(([text]) => text);
}

/** The error `input` raises, whatever the chunk boundaries. */
function failure(input: string): string {
  let message: string | undefined;
  for (const size of [1, 3, Math.max(1, input.length)]) {
    assert.throws(
      () => splitInChunks(input, size),
      (error: unknown) => {
        assert.ok(error instanceof JsonStreamError);
        message ??= error.message;
        assert.equal(error.message, message, `chunks of ${size}`);
        return true;
      },
    );
  }
  return message!;
}

void describe('JsonArraySplitter', () => {
  void test('strings holding brackets, commas, braces and escaped quotes stay whole', () => {
    assert.deepEqual(split(String.raw`["a]b", "c,d", "{e", "f\"]", "\\", "\\\"", "x\\\\"]`), [
      '"a]b"',
      '"c,d"',
      '"{e"',
      String.raw`"f\"]"`,
      String.raw`"\\"`,
      String.raw`"\\\""`,
      String.raw`"x\\\\"`,
    ]);
    assert.deepEqual(split('[{"name": "a \\"quoted\\" [x], {y}", "n": 1}]'), [
      '{"name": "a \\"quoted\\" [x], {y}", "n": 1}',
    ]);
  });

  void test('unicode text, including surrogate pairs split across chunks, is kept exactly', () => {
    assert.deepEqual(split('["héllo 🛋️", {"k": "日本", "e": "\\u00e9\\ud83d\\ude00"}]'), [
      '"héllo 🛋️"',
      '{"k": "日本", "e": "\\u00e9\\ud83d\\ude00"}',
    ]);
  });

  void test('nested arrays and objects are one element each', () => {
    assert.deepEqual(split('[[1,[2,3]],{"a":{"b":[{}]}},[],{}]'), [
      '[1,[2,3]]',
      '{"a":{"b":[{}]}}',
      '[]',
      '{}',
    ]);
  });

  void test('whitespace around elements is dropped, inside them kept; scalars are elements too', () => {
    assert.deepEqual(split('\n\t [ \r\n 1 , \n -2.5e3 \t,true,null,"x y" ,{ "a" : [ 1 , 2 ] }\n]\n '), [
      '1',
      '-2.5e3',
      'true',
      'null',
      '"x y"',
      '{ "a" : [ 1 , 2 ] }',
    ]);
  });

  void test('the {"items": [...]} form, a byte order mark, and an escaped key', () => {
    assert.deepEqual(split('{ "items" : [ {"a":1} , {"b":[2]} ] }\n'), ['{"a":1}', '{"b":[2]}']);
    assert.deepEqual(split('\uFEFF[1]'), ['1']);
    assert.deepEqual(split('{"it\\u0065ms": [1]}'), ['1']);
  });

  void test('empty arrays yield nothing', () => {
    assert.deepEqual(split('[]'), []);
    assert.deepEqual(split('  [ \n ]  '), []);
    assert.deepEqual(split('{"items": []}'), []);
  });

  void test('each element reports the line it starts on', () => {
    const input = '[\n{"a":\n1},\n\n  2,  "x\ny"  , 3]';
    assert.deepEqual(splitInChunks(input, 4), [
      ['{"a":\n1}', 2],
      ['2', 5],
      ['"x\ny"', 5],
      ['3', 6],
    ]);
  });

  void test('elements with defects inside are still split (the reader judges them)', () => {
    assert.deepEqual(split('[{"a" 1}, 1 2, tru]'), ['{"a" 1}', '1 2', 'tru']);
  });

  void test('random documents split back into their elements, whatever the chunks', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const pieces = ['[', ']', '{', '}', ',', ':', '"', '\\', 'é', '🛋', ' ', '\n', 'a'];
    const value = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3)
        return Array.from(
          { length: Math.floor(random() * 6) },
          () => pieces[Math.floor(random() * pieces.length)],
        ).join('');
      if (r < 0.45) return Math.round(random() * 1e6) / 100;
      if (r < 0.5) return random() < 0.5 ? null : true;
      if (r < 0.75) return Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(random() * 4) }, (_, i) => [`k${i}${pieces[i]}`, value(depth + 1)]),
      );
    };
    for (let round = 0; round < 50; round++) {
      const elements = Array.from({ length: Math.floor(random() * 20) }, () => value(0));
      const input = JSON.stringify(elements, null, round % 3 === 0 ? undefined : round % 5);
      const size = 1 + Math.floor(random() * 40);
      assert.deepEqual(
        splitInChunks(input, size).map(([text]) => JSON.parse(text) as unknown),
        elements,
        `round ${round}`,
      );
    }
  });

  void test('structural defects fail with what and where', () => {
    assert.equal(failure(''), 'empty input: expected a JSON array at line 1, column 0');
    assert.equal(failure('  \n'), 'empty input: expected a JSON array at line 2, column 0');
    assert.equal(failure('"text"'), 'expected "[" or {"items": [...]} but found "\\"" at line 1, column 1');
    assert.equal(failure('[1,]'), 'expected a value but found "]" at line 1, column 4');
    assert.equal(failure('[,1]'), 'expected a value but found "," at line 1, column 2');
    assert.equal(failure('[1, ,2]'), 'expected a value but found "," at line 1, column 5');
    assert.equal(failure('[{"a": [1}]'), 'unexpected "}" at line 1, column 10');
    assert.equal(failure('[1}'), 'unexpected "}" at line 1, column 3');
    assert.equal(failure('[1]\n x'), 'unexpected "x" after the array at line 2, column 2');
    assert.equal(failure('[1] [2]'), 'unexpected "[" after the array at line 1, column 5');
    assert.equal(failure('[1, "abc'), 'unterminated string at line 1, column 8');
    assert.equal(failure('[1, {"a": 2}'), 'unexpected end of input at line 1, column 12');
    assert.equal(
      failure('{"other": []}'),
      'unexpected property "other": the top-level object may only hold "items" at line 1, column 8',
    );
    assert.equal(failure('{"items": 5}'), '"items" must be an array at line 1, column 11');
    assert.equal(
      failure('{"items": [1], "x": 2}'),
      'the top-level object may only hold "items" at line 1, column 14',
    );
    assert.equal(failure('{"items" [1]}'), 'expected ":" but found "[" at line 1, column 10');
    assert.equal(failure('{}'), 'expected the property "items" at line 1, column 2');
    assert.equal(failure('{"items": [1]'), 'unexpected end of input at line 1, column 13');
  });
});

void describe('file readers', () => {
  let dir: string;
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'json-stream-'));
  });
  after(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  void test('the format follows the extension unless given', () => {
    assert.equal(formatOf('a.jsonl'), 'jsonl');
    assert.equal(formatOf('a.NDJSON'), 'jsonl');
    assert.equal(formatOf('a.json'), 'json');
    assert.equal(formatOf('a.txt', 'jsonl'), 'jsonl');
    assert.equal(formatOf('a.CSV'), 'csv');
    assert.equal(formatOf('a.xlsx'), 'xlsx');
    assert.equal(formatOf('a.txt', 'csv'), 'csv');
    assert.throws(() => formatOf('a.json', 'xml'), /--format must be json, jsonl, csv or xlsx, not "xml"/);
  });

  void test('JSONL: a position per non-blank line, malformed lines reported with their line number', async () => {
    const file = path.join(dir, 'a.jsonl');
    await fs.writeFile(file, '\uFEFF{"a":1}\r\n\n  [1, 2]  \n{"a" 1}\n"s"');
    const items = [];
    for await (const item of readJsonLines(file)) items.push(item);
    assert.deepEqual(
      items.map(({ position, line, text, malformed }) => [
        position,
        line,
        text ?? `! ${malformed?.split(' ')[0]}`,
      ]),
      [
        [0, 1, '{"a":1}'],
        [1, 3, '[1, 2]'],
        [2, 4, '! Expected'],
        [3, 5, '"s"'],
      ],
    );
  });

  void test('JSON: elements in order with positions; a bad element is malformed, a bad structure throws', async () => {
    const file = path.join(dir, 'a.json');
    await fs.writeFile(file, '{"items": [\n {"a": 1.10},\n {"a" 1},\n "s"\n]}');
    const items = [];
    for await (const item of readJsonArray(file)) items.push(item);
    assert.deepEqual(
      items.map(({ position, line, text, malformed }) => [
        position,
        line,
        text ?? (malformed ? 'malformed' : ''),
      ]),
      [
        [0, 2, '{"a": 1.10}'],
        [1, 3, 'malformed'],
        [2, 4, '"s"'],
      ],
    );
    await fs.writeFile(file, '[1, 2, [3}]');
    const seen: string[] = [];
    await assert.rejects(
      async () => {
        for await (const item of readJsonArray(file)) seen.push(item.text!);
      },
      { name: 'Error', message: 'unexpected "}" at line 1, column 10' },
    );
    assert.deepEqual(seen, ['1', '2']);
  });

  void test('JSON Lines read as JSON: the error says to pass --format jsonl', async () => {
    const file = path.join(dir, 'lines.json');
    const hint = ' (if the file is JSON Lines, pass --format jsonl)';
    const failure = async (content: string) => {
      await fs.writeFile(file, content);
      let message: string | undefined;
      await assert.rejects(
        async () => {
          for await (const _ of readJsonArray(file));
        },
        (error: Error) => {
          message = error.message;
          return true;
        },
      );
      return message;
    };
    assert.equal(
      await failure('{"external_id": "a", "name": "x"}\n{"external_id": "b"}\n'),
      `unexpected property "external_id": the top-level object may only hold "items" at line 1, column 14${hint}`,
    );
    assert.equal(await failure('[1, 2]\n[3]\n'), `unexpected "[" after the array at line 2, column 1${hint}`);
    assert.equal(
      await failure('{"items": [1]}\n{"items": [2]}\n'),
      `unexpected "{" after the array at line 2, column 1${hint}`,
    );
    // Other defects are not what JSON Lines looks like: no hint.
    assert.equal(await failure('[1, 2] x'), 'unexpected "x" after the array at line 1, column 8');
  });
});
