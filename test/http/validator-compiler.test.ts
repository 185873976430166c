import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createValidatorCompiler } from '../../src/http/validator-compiler.ts';

const compile = (schema: object, httpPart = 'querystring') =>
  createValidatorCompiler()({
    schema,
    httpPart,
    url: '/x',
    method: 'GET',
  }) as ((data: unknown) => boolean) & {
    errors?: Array<{ instancePath: string; keyword: string }> | null;
  };

const query = {
  type: 'object',
  properties: { limit: { type: 'integer', minimum: 1 }, q: { type: 'string' } },
};

void test('query integers are read from decimal digits only, beside the errors Ajv finds', () => {
  const validate = compile(query);
  for (const text of ['16', '016', '-3']) {
    const data: Record<string, unknown> = { limit: text };
    const valid = validate(data);
    assert.equal(valid, text !== '-3', text);
    if (valid) assert.equal(data.limit, Number(text));
  }
  for (const text of ['0x10', '1e1', '5.0', '+5', ' 5', '5 ', '']) {
    assert.equal(validate({ limit: text }), false, text);
    assert.deepEqual(
      validate.errors?.map((e) => [e.instancePath, e.keyword]),
      [['/limit', 'type']],
      text,
    );
  }
  assert.equal(validate({ limit: '1e1', q: 5 }), false);
  assert.deepEqual(
    validate.errors?.map((e) => [e.instancePath, e.keyword]),
    [['/limit', 'type']],
    'coerced q is fine, limit reported once',
  );
});

void test('a query schema with an integer anywhere but a top-level property is refused when compiled', () => {
  const nested = {
    type: 'object',
    properties: { page: { type: 'object', properties: { n: { type: 'integer' } } } },
  };
  const union = { type: 'object', properties: { limit: { anyOf: [{ type: 'integer' }, { type: 'null' }] } } };
  const nullable = { type: 'object', properties: { limit: { type: ['integer', 'null'] } } };
  for (const schema of [nested, union, nullable]) {
    assert.throws(
      () => compile(schema),
      /query and path integers must be top-level properties of type "integer"/,
    );
  }
  // Bodies are not coerced, so they may nest integers as they like.
  assert.doesNotThrow(() => compile(nested, 'body'));
});
